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
#include "kernel/kern/profile.h"
#include "kernel/proc/fault.h"
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

// Arm ARM, ESR_ELx ISS of data aborts: WnR (bit 6) is set for a write.
constexpr uint64_t k_iss_wnr = 1u << 6;
// Arm ARM, ESR_ELx ISS of data and instruction aborts: the fault status
// code, DFSC/IFSC (bits [5:0]). The level faults come in fours (levels 0-3,
// or -1..2 for the walk aborts); the rest are single codes.
constexpr unsigned k_fsc_mask = 0x3F;
constexpr unsigned k_fsc_address_size = 0x00;  // 0x00-0x03
constexpr unsigned k_fsc_translation = 0x04;   // 0x04-0x07
constexpr unsigned k_fsc_access_flag = 0x08;   // 0x08-0x0B
constexpr unsigned k_fsc_permission = 0x0C;    // 0x0C-0x0F
constexpr unsigned k_fsc_external = 0x10;      // synchronous external abort
constexpr unsigned k_fsc_tag_check = 0x11;     // MTE (Toll enables none)
constexpr unsigned k_fsc_external_walk = 0x14; // 0x14-0x17 (0x13: level -1)
constexpr unsigned k_fsc_parity = 0x18;        // parity or ECC error on the access
constexpr unsigned k_fsc_parity_walk = 0x1C;   // 0x1C-0x1F (0x1B: level -1)
constexpr unsigned k_fsc_alignment = 0x21;     // e.g. a misaligned exclusive or acquire
constexpr unsigned k_fsc_tlb_conflict = 0x30;
constexpr unsigned k_fsc_atomic_hw_update = 0x31; // unsupported hardware AF/dirty update
constexpr unsigned k_fsc_lockdown = 0x34;         // IMPLEMENTATION DEFINED
constexpr unsigned k_fsc_exclusive = 0x35;        // unsupported exclusive or atomic access
// Arm ARM, ESR_ELx.EC: PC and SP alignment faults.
constexpr unsigned k_ec_pc_alignment = 0x22, k_ec_sp_alignment = 0x26;

// What an EL0 data or instruction abort with fault status @p fsc is, for the
// core's policy (proc::user_fault), following Linux's fault_info[] table
// (arch/arm64/mm/fault.c): translation and permission faults go to the VM;
// an alignment fault is SIGBUS BUS_ADRALN; external aborts and parity
// errors on the access are SIGBUS; an access-flag fault cannot be retried
// (Toll sets AF in every entry it writes, so retrying would loop forever);
// everything else (address size, walk aborts, TLB conflict, unsupported
// atomics and exclusives, codes the architecture leaves undefined) ends
// the program.
constexpr proc::FaultKind abort_kind(unsigned fsc)
{
    using proc::FaultKind;
    switch (fsc & ~3u) {
    case k_fsc_translation:
    case k_fsc_permission:
        return FaultKind::page;
    case k_fsc_access_flag:
        return FaultKind::access;
    default:
        break;
    }
    if (fsc == k_fsc_alignment)
        return FaultKind::alignment;
    if (fsc == k_fsc_external || fsc == k_fsc_parity)
        return FaultKind::bus;
    return FaultKind::fatal;
}

// Every class of status has its outcome; the ones a user program cannot
// raise under QEMU (ut_faults raises the others) are pinned here.
static_assert(abort_kind(k_fsc_translation + 3) == proc::FaultKind::page);
static_assert(abort_kind(k_fsc_permission + 1) == proc::FaultKind::page);
static_assert(abort_kind(k_fsc_access_flag + 3) == proc::FaultKind::access);
static_assert(abort_kind(k_fsc_alignment) == proc::FaultKind::alignment);
static_assert(abort_kind(k_fsc_external) == proc::FaultKind::bus);
static_assert(abort_kind(k_fsc_parity) == proc::FaultKind::bus);
static_assert(abort_kind(k_fsc_address_size + 2) == proc::FaultKind::fatal);
static_assert(abort_kind(k_fsc_tag_check) == proc::FaultKind::fatal);
static_assert(abort_kind(k_fsc_external_walk + 1) == proc::FaultKind::fatal);
static_assert(abort_kind(k_fsc_parity_walk + 3) == proc::FaultKind::fatal);
static_assert(abort_kind(k_fsc_tlb_conflict) == proc::FaultKind::fatal);
static_assert(abort_kind(k_fsc_atomic_hw_update) == proc::FaultKind::fatal);
static_assert(abort_kind(k_fsc_lockdown) == proc::FaultKind::fatal);
static_assert(abort_kind(k_fsc_exclusive) == proc::FaultKind::fatal);
static_assert(abort_kind(0x3F) == proc::FaultKind::fatal);

// A synchronous exception from EL0 that no hook took: decoded for the
// core's fault policy, which resolves a page fault or sends the signal.
void user_exception(arch::TrapFrame& f)
{
    using proc::FaultKind;
    unsigned ec = exception_class(f);
    if (ec == k_ec_data_abort_el0 || ec == k_ec_instruction_abort_el0) {
        unsigned fsc = static_cast<unsigned>(f.esr & k_fsc_mask);
        FaultKind kind = abort_kind(fsc);
        bool data = ec == k_ec_data_abort_el0;
        const char* what = data ? "data abort" : "instruction abort";
        if (kind == FaultKind::page)
            proc::user_page_fault(ec, what, f.elr, f.far, data && (f.esr & k_iss_wnr),
                                  (fsc & ~3u) == k_fsc_permission);
        else
            proc::user_fault(proc::UserFault{kind, ec, what, f.elr, f.far});
        return;
    }
    proc::UserFault fault{FaultKind::illegal, ec, "synchronous exception", f.elr};
    if (ec == k_ec_unknown) {
        fault.what = "undefined instruction";
    } else if (ec == k_ec_pc_alignment || ec == k_ec_sp_alignment) {
        fault.kind = FaultKind::alignment;
        fault.what = ec == k_ec_pc_alignment ? "PC alignment fault" : "SP alignment fault";
        fault.address = ec == k_ec_pc_alignment ? f.far : f.sp_el0;
    } else if (ec == k_ec_brk) {
        fault.kind = FaultKind::breakpoint;
        fault.what = "breakpoint";
    }
    proc::user_fault(fault);
}

} // namespace

void set_sync_hook(unsigned ec, SyncHook hook)
{
    if (ec < k_ec_count)
        g_hooks[ec] = hook;
}

TOLL_COUNTER(g_traps_total, "cpu.traps");

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

namespace toll::arch {
// The counting profiler (kern/profile.h) steps the kernel with i386's trap
// flag; arm64's software step of EL1 is not written yet.
bool profile_can_step()
{
    return false;
}

void profile_step_stop()
{
}
} // namespace toll::arch

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
        toll::proc::trap_exit(*frame, frame->from_user());
        return;
    }
    dump_frame(*frame);
    toll::panic("unexpected exception: %s, ESR 0x%llx (class 0x%x), ELR 0x%llx, FAR 0x%llx",
                k_vector_names[vector & 15], (unsigned long long)frame->esr,
                exception_class(*frame), (unsigned long long)frame->elr,
                (unsigned long long)frame->far);
}
