// The C++ side of every arm64 exception: interrupts go to the GIC's
// handlers, synchronous exceptions to a hook for their class; anything
// else is a kernel bug and panics with the registers.
#include "arch/arm64/trap.h"
#include "arch/arm64/gic.h"
#include "arch/arm64/layout.h"
#include "arch/arm64/semihosting.h"
#include "kernel/kern/console.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/panic.h"
#include "kernel/proc/process.h"
#include "kernel/vm/vmspace.h"
#include <stddef.h>

namespace toll::arm64 {
namespace {

static_assert(offsetof(arch::TrapFrame, sp_el0) == TF_SP_EL0);
static_assert(offsetof(arch::TrapFrame, elr) == TF_ELR);
static_assert(offsetof(arch::TrapFrame, spsr) == TF_SPSR);
static_assert(offsetof(arch::TrapFrame, esr) == TF_ESR);
static_assert(offsetof(arch::TrapFrame, far) == TF_FAR);
static_assert(sizeof(arch::TrapFrame) == TRAP_FRAME_SIZE && TRAP_FRAME_SIZE % 16 == 0,
              "the stack pointer must stay 16-byte aligned");

SyncHook g_hooks[k_ec_count];

TOLL_COUNTER(g_page_faults, "cpu.traps.page_fault");
TOLL_COUNTER(g_data_aborts, "arm64.traps.data_abort");
TOLL_COUNTER(g_instruction_aborts, "arm64.traps.instruction_abort");
TOLL_COUNTER(g_other_traps, "cpu.traps.other");

// Arm ARM, "Exception vectors": the groups, four entries each, in table order.
const char* const k_vector_names[16] = {
    "synchronous (EL1, SP_EL0)",
    "IRQ (EL1, SP_EL0)",
    "FIQ (EL1, SP_EL0)",
    "SError (EL1, SP_EL0)",
    "synchronous (EL1)",
    "IRQ (EL1)",
    "FIQ (EL1)",
    "SError (EL1)",
    "synchronous (EL0, AArch64)",
    "IRQ (EL0, AArch64)",
    "FIQ (EL0, AArch64)",
    "SError (EL0, AArch64)",
    "synchronous (EL0, AArch32)",
    "IRQ (EL0, AArch32)",
    "FIQ (EL0, AArch32)",
    "SError (EL0, AArch32)",
};

// Linux signal numbers for what a user program can cause.
constexpr int k_sigill = 4, k_sigtrap = 5, k_sigbus = 7, k_sigsegv = 11;
// Arm ARM, ESR_ELx ISS of data aborts: WnR (bit 6) is set for a write; the
// fault status code (bits [5:0]) 0b0011xx is a permission fault, i.e. the
// page was mapped.
constexpr uint64_t k_iss_wnr = 1u << 6;
constexpr uint64_t k_fsc_mask = 0x3C, k_fsc_permission = 0x0C;
// Arm ARM, ESR_ELx.EC: PC and SP alignment faults.
constexpr unsigned k_ec_pc_alignment = 0x22, k_ec_sp_alignment = 0x26;

// A synchronous exception from EL0 that no hook took: a page fault the VM
// may satisfy, or the program's fault, which kills it.
void user_exception(arch::TrapFrame& f)
{
    unsigned ec = exception_class(f);
    int signal = k_sigill;
    const char* what = ec == k_ec_unknown ? "undefined instruction" : "synchronous exception";
    uint64_t address = 0;
    if (ec == k_ec_data_abort_el0 || ec == k_ec_instruction_abort_el0) {
        what = ec == k_ec_data_abort_el0 ? "data abort" : "instruction abort";
        address = f.far;
        bool write = ec == k_ec_data_abort_el0 && (f.esr & k_iss_wnr);
        bool present = (f.esr & k_fsc_mask) == k_fsc_permission;
        Errno e = vm::handle_user_fault(proc::current_vm(), address, write, present);
        if (e == k_ok)
            return;
        if (e == k_enomem)
            proc::terminate_by_fault(proc::k_sigkill, ec, "out of memory", f.elr, address);
        signal = k_sigsegv;
    } else if (ec == k_ec_pc_alignment || ec == k_ec_sp_alignment) {
        signal = k_sigbus;
        what = "alignment fault";
    } else if (ec == k_ec_brk) {
        signal = k_sigtrap;
        what = "breakpoint";
    }
    proc::force_signal(signal, ec, what, f.elr, address);
}

} // namespace

void set_sync_hook(unsigned ec, SyncHook hook)
{
    if (ec < k_ec_count)
        g_hooks[ec] = hook;
}

TrapExitHook g_trap_exit_hook;
TOLL_COUNTER(g_traps_total, "cpu.traps");

void set_trap_exit_hook(TrapExitHook hook)
{
    g_trap_exit_hook = hook;
}

void dump_frame(const arch::TrapFrame& f)
{
    for (unsigned i = 0; i < 31; i += 2) {
        if (i == 30)
            kprintf("  x30 %016llx\n", (unsigned long long)f.x[30]);
        else
            kprintf("  x%-2u %016llx  x%-2u %016llx\n", i, (unsigned long long)f.x[i], i + 1,
                    (unsigned long long)f.x[i + 1]);
    }
    kprintf("  elr %016llx spsr %08llx sp_el0 %016llx\n", (unsigned long long)f.elr,
            (unsigned long long)f.spsr, (unsigned long long)f.sp_el0);
}

} // namespace toll::arm64

/// Called by vectors.S with the frame it built and the vector number.
extern "C" void arm64_trap(toll::arch::TrapFrame* frame, uint64_t vector)
{
    using namespace toll::arm64;
    bool handled = false;
    g_traps_total.add();
    if (vector == k_vector_el1_irq || vector == k_vector_el0_irq) {
        toll::InterruptScope in_interrupt;
        gic_dispatch();
        handled = true;
    } else if (vector == k_vector_el1_sync || vector == k_vector_el0_sync) {
        // Aborts are the page faults of arm64: a data abort (EL0, or EL1 in
        // a user copy) or an instruction fetch from EL0.
        unsigned ec = exception_class(*frame);
        if (ec == k_ec_data_abort_el0 || ec == k_ec_data_abort_el1) {
            g_page_faults.add();
            g_data_aborts.add();
        } else if (ec == k_ec_instruction_abort_el0 || ec == k_ec_instruction_abort_el1) {
            g_page_faults.add();
            g_instruction_aborts.add();
        } else {
            g_other_traps.add();
        }
        // Without -semihosting the trap instruction is undefined: power off another way.
        if (frame->elr == reinterpret_cast<uint64_t>(arm64_semihosting_trap))
            poweroff_without_semihosting();
        SyncHook hook = g_hooks[exception_class(*frame)];
        handled = hook && hook(*frame);
        if (!handled && vector == k_vector_el0_sync) {
            user_exception(*frame);
            handled = true;
        }
    }
    if (handled) {
        if (frame->from_user())
            toll::proc::return_to_user_checks(*frame);
        if (g_trap_exit_hook)
            g_trap_exit_hook(frame->from_user());
        return;
    }
    dump_frame(*frame);
    toll::panic("unexpected exception: %s, ESR 0x%llx (class 0x%x), ELR 0x%llx, FAR 0x%llx",
                k_vector_names[vector & 15], (unsigned long long)frame->esr,
                exception_class(*frame), (unsigned long long)frame->elr,
                (unsigned long long)frame->far);
}
