// What happens to a program that faults: one policy for every port. A port
// decodes its trap into a UserFault (which kind, where, reading or writing)
// and hands it over; the core asks the VM to resolve a page fault and
// otherwise picks the signal and si_code Linux would send.
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/vm/vmspace.h"
#include <stdint.h>

namespace toll::proc {

/// The kinds of synchronous exception a user program can cause, as a port
/// classifies its trap (the port's README says which of its traps is which).
enum class FaultKind : uint8_t {
    page,       ///< translation or permission fault: the VM may fill or copy the page
    access,     ///< an access the mapping refuses and no fault handling may retry
                ///< (arm64: an access-flag fault; Toll's entries always have AF set)
    alignment,  ///< a misaligned access, PC or SP the CPU refuses
    bus,        ///< a synchronous external abort or a parity error on the access
    fatal,      ///< no program can be told about it: a TLB conflict, a table-walk
                ///< abort, a fault status the architecture leaves undefined
    illegal,    ///< an undefined or privileged instruction
    breakpoint, ///< a breakpoint or debug trap
    arithmetic, ///< an integer divide error or a floating-point exception
    protection, ///< i386: a general-protection or segment fault
};

/// One fault from user mode, decoded by the port.
struct UserFault {
    FaultKind kind;
    unsigned vector;       ///< the port's number for the trap, for the console line
    const char* what;      ///< its name, for the console line
    uintptr_t pc;          ///< the faulting instruction
    uintptr_t address = 0; ///< the address accessed (page, access, alignment, bus)
    bool write = false;    ///< page: the access was a write
    bool present = false;  ///< page: the page was mapped (a permission fault)
};

/// The core's answer to a fault from user mode in the running process,
/// modelled on Linux (arch/arm64/mm/fault.c fault_info[], arch/x86/mm/fault.c):
///   page        the VM resolves it and the instruction runs again; if it
///               cannot for lack of memory, SIGKILL (the out-of-memory
///               killer's answer); otherwise SIGSEGV with SEGV_MAPERR (no
///               region there) or SEGV_ACCERR (a region that refuses it)
///   access      SIGSEGV, SEGV_ACCERR
///   alignment   SIGBUS, BUS_ADRALN
///   bus         SIGBUS, BUS_OBJERR
///   fatal       SIGKILL (Linux: SI_KERNEL), whatever the program's actions
///   illegal     SIGILL, ILL_ILLOPC
///   breakpoint  SIGTRAP, TRAP_BRKPT
///   arithmetic  SIGFPE, FPE_INTDIV
///   protection  SIGSEGV, SI_KERNEL
/// A signal goes to a handler if the program has one and does not block it
/// (force_signal); otherwise the program ends. Returns when the program is
/// to run on (retried, or to its handler).
inline void user_fault(const UserFault& fault);

/// user_fault's answer once the VM had its say (@p vm_answer: why it
/// refused a page fault; unused for the other kinds): the signal.
void user_fault_signal(const UserFault& fault, Errno vm_answer);

/// The VM's side of the current process, as process.h declares it.
vm::VmSpace* current_vm();

inline void user_fault(const UserFault& fault)
{
    Errno e = k_efault;
    if (fault.kind == FaultKind::page) {
        e = vm::handle_user_fault(current_vm(), fault.address, fault.write, fault.present);
        if (e == k_ok)
            return;
    }
    user_fault_signal(fault, e);
}

/// user_fault for a page fault (FaultKind::page), the common case, taking
/// the fault's fields one by one: the UserFault is built only if the VM
/// refuses, so that a fault the VM resolves (a demand-zero page, a
/// copy-on-write copy) costs the port's trap no more than asking the VM.
inline void user_page_fault(unsigned vector, const char* what, uintptr_t pc, uintptr_t address,
                            bool write, bool present)
{
    Errno e = vm::handle_user_fault(current_vm(), address, write, present);
    if (e != k_ok)
        user_fault_signal(UserFault{FaultKind::page, vector, what, pc, address, write, present}, e);
}

} // namespace toll::proc
