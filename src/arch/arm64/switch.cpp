// Building the first switch frame of a new kernel thread (switch.h).
#include "arch/arm64/switch.h"

namespace toll::arm64 {

uint64_t switch_frame_for_thread(uint64_t stack_top, void (*entry)(void*), void* arg,
                                 void (*on_return)())
{
    // AAPCS64: the stack pointer is 16-byte aligned at every public interface.
    stack_top &= ~uint64_t(15);
    auto* frame = reinterpret_cast<SwitchFrame*>(stack_top) - 1;
    *frame = SwitchFrame{};
    frame->x19 = reinterpret_cast<uint64_t>(entry);
    frame->x20 = reinterpret_cast<uint64_t>(arg);
    frame->x21 = reinterpret_cast<uint64_t>(on_return);
    frame->x30 = reinterpret_cast<uint64_t>(arm64_kernel_thread_start);
    return reinterpret_cast<uint64_t>(frame);
}

} // namespace toll::arm64
