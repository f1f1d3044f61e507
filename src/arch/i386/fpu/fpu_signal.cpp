// The FPU's part in signal delivery: the interrupted program's registers
// travel in the signal frame, and sigreturn brings them back.
#include "arch/i386/fpu/fpu.h"
#include "arch/i386/fpu/fpu_internal.h"
#include "lib/string.h"

namespace toll::i386::fpu {

bool signal_save(arch::ThreadContext& ctx, uint8_t* image)
{
    if (owner() == &ctx)
        release_owner(); // the live registers go to the slot first
    if (!ctx.fpu.used)
        return false;
    memcpy(image, area(ctx), k_fxsave_size);
    return true;
}

void signal_restore(arch::ThreadContext& ctx, const uint8_t* image)
{
    if (!image) {
        exec_reset(ctx);
        return;
    }
    if (owner() == &ctx)
        release_owner(); // so the next use loads the slot, not stale registers
    memcpy(area(ctx), image, k_fxsave_size);
    ctx.fpu.used = true;
}

} // namespace toll::i386::fpu
