// Backtraces through the frame-pointer chain. Both ports' calling
// conventions keep the same frame record where the frame pointer points:
// the caller's frame pointer, then the return address (i386: %ebp, pushed
// below the address the call pushed; arm64: x29 and x30, the AAPCS64 frame
// record), so one walk serves both.
#include "kernel/kern/backtrace.h"

namespace toll {

unsigned backtrace(uintptr_t* out, unsigned max)
{
    // The largest frame the walk believes: a kernel stack is 16 KB.
    constexpr uintptr_t k_max_frame = 16384;
    auto fp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    unsigned n = 0;
    while (n < max && fp && (fp % sizeof(uintptr_t)) == 0) {
        auto* record = reinterpret_cast<const uintptr_t*>(fp);
        uintptr_t next = record[0], ret = record[1];
        if (!ret)
            break;
        out[n++] = ret;
        // Stacks grow down: the caller's frame is above, and near.
        if (next <= fp || next - fp > k_max_frame)
            break;
        fp = next;
    }
    return n;
}

} // namespace toll
