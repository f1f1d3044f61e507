// The device-not-available exception (#NM, vector 7): how a lazily switched
// thread gets its FPU registers back. Two handlers: the standard one restores
// through the configured path; the other, which fpu.clean=idt points the
// IDT's #NM gate at on CPUs without the leak, has no cleaning at all.
#include "arch/i386/fpu/fpu_internal.h"
#include "arch/i386/trap.h"
#include "kernel/kern/panic.h"
#include "kernel/proc/thread.h"

namespace toll::i386::fpu {
namespace {

/// The stub fpu.clean=idt sends #NM through: vector 22 is reserved by Intel
/// (SDM Vol. 3, table 6-1) and never raised, so its entry stub in
/// trap_entry.S is free, and it pushes no error code, like #NM.
constexpr unsigned k_vec_dna_without_cleaning = 22;

// Panics on an #NM from the kernel: the kernel is compiled without x87 and
// SSE (-mno-80387 -mno-sse) and only this module runs FPU instructions, with
// CR0.TS clear. Reaching here from the kernel is a broken invariant.
void reject_kernel_dna(const arch::TrapFrame& frame)
{
    if (!frame.from_user())
        panic("fpu: device not available (#NM) in kernel mode at eip 0x%x: kernel code used the "
              "FPU outside src/arch/i386/fpu with CR0.TS set",
              frame.eip);
}

// What both #NM handlers do: the running user thread executed an FPU, MMX
// or SSE instruction while CR0.TS was set (lazy switching, or its first
// use), and gets its registers back through @p restore. Returns true: the
// instruction is retried once this returns. (Inlined into each handler, so
// that sharing it costs the trap path nothing.)
[[gnu::always_inline]] inline bool handle_dna(arch::TrapFrame& frame, RestoreFn restore)
{
    // LAB fpu BEGIN: reject a kernel #NM, count it, then make the running thread the FPU owner through restore
    reject_kernel_dna(frame);
    g_dna_traps.add();
    take_ownership(restore);
    return true;
    // LAB fpu STUB
    // (void)frame;
    // (void)restore;
    // return false;
    // LAB fpu END
}

// The #NM handler: restores through the configured path (g_restore).
bool dna_trap(arch::TrapFrame& frame)
{
    return handle_dna(frame, g_restore);
}

// The same with a restore path that never cleans: reached only through the
// vector-22 stub, when fpu.clean=idt and the CPU has no leak.
bool dna_trap_without_cleaning(arch::TrapFrame& frame)
{
    return handle_dna(frame, restore_plain);
}

} // namespace

void take_ownership(RestoreFn restore)
{
    // LAB fpu BEGIN: clear CR0.TS; give a thread without FPU state the initial image; restore its image; make it the owner
    clts();
    arch::ThreadContext& me = proc::current()->context;
    uint8_t* image = area(me);
    if (!me.fpu.used) {
        make_initial_image(image);
        me.fpu.used = true;
    }
    restore(image);
    g_owner = &me;
    // LAB fpu STUB
    // (void)restore;
    // LAB fpu END
}

void install_trap_handlers()
{
    set_exception_hook(k_vec_device_not_available, dna_trap);
    set_exception_hook(k_vec_dna_without_cleaning, dna_trap_without_cleaning);
    if (g_config.clean == Clean::idt && !g_config.bug)
        idt_set_gate(k_vec_device_not_available, trap_stub_address(k_vec_dna_without_cleaning),
                     false);
}

} // namespace toll::i386::fpu
