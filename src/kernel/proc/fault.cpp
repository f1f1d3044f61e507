// The core's user-fault policy (fault.h): the VM first, then a signal.
#include "kernel/proc/fault.h"
#include "kernel/proc/process.h"
#include "kernel/proc/signal.h"
#include "kernel/vm/vmspace.h"

namespace toll::proc {
namespace {

// A page fault the VM refused (@p e): SIGKILL for a memory shortage,
// otherwise SIGSEGV saying whether anything is mapped there.
void page_fault(const UserFault& f, Errno e)
{
    vm::VmSpace* space = current_vm();
    if (e == k_enomem)
        terminate_by_fault(k_sigkill, f.vector, "out of memory", f.pc, f.address);
    bool region = f.present || (space && f.address < arch::user_space_limit() &&
                                vm::vmspace_find(space, f.address));
    force_signal(k_sigsegv, region ? k_segv_accerr : k_segv_maperr, f.vector, f.what, f.pc,
                 f.address);
}

} // namespace

void user_fault_signal(const UserFault& f, Errno vm_answer)
{
    switch (f.kind) {
    case FaultKind::page:
        page_fault(f, vm_answer);
        return;
    case FaultKind::access:
        force_signal(k_sigsegv, k_segv_accerr, f.vector, f.what, f.pc, f.address);
        return;
    case FaultKind::alignment:
        force_signal(k_sigbus, k_bus_adraln, f.vector, f.what, f.pc, f.address);
        return;
    case FaultKind::bus:
        force_signal(k_sigbus, k_bus_objerr, f.vector, f.what, f.pc, f.address);
        return;
    case FaultKind::fatal:
        terminate_by_fault(k_sigkill, f.vector, f.what, f.pc, f.address);
    case FaultKind::illegal:
        force_signal(k_sigill, k_ill_illopc, f.vector, f.what, f.pc, f.pc);
        return;
    case FaultKind::breakpoint:
        force_signal(k_sigtrap, k_trap_brkpt, f.vector, f.what, f.pc, f.pc);
        return;
    case FaultKind::arithmetic:
        force_signal(k_sigfpe, k_fpe_intdiv, f.vector, f.what, f.pc, f.pc);
        return;
    case FaultKind::protection:
        force_signal(k_sigsegv, k_si_kernel, f.vector, f.what, f.pc, 0);
        return;
    }
}

} // namespace toll::proc
