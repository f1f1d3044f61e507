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
        terminate_by_fault(TOLL_SIGKILL, f.vector, "out of memory", f.pc, f.address);
    bool region = f.present || (space && f.address < arch::user_space_limit() &&
                                vm::vmspace_find(space, f.address));
    force_signal(TOLL_SIGSEGV, region ? TOLL_SEGV_ACCERR : TOLL_SEGV_MAPERR, f.vector, f.what, f.pc,
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
        force_signal(TOLL_SIGSEGV, TOLL_SEGV_ACCERR, f.vector, f.what, f.pc, f.address);
        return;
    case FaultKind::alignment:
        force_signal(TOLL_SIGBUS, TOLL_BUS_ADRALN, f.vector, f.what, f.pc, f.address);
        return;
    case FaultKind::bus:
        force_signal(TOLL_SIGBUS, TOLL_BUS_OBJERR, f.vector, f.what, f.pc, f.address);
        return;
    case FaultKind::fatal:
        terminate_by_fault(TOLL_SIGKILL, f.vector, f.what, f.pc, f.address);
    case FaultKind::illegal:
        force_signal(TOLL_SIGILL, TOLL_ILL_ILLOPC, f.vector, f.what, f.pc, f.pc);
        return;
    case FaultKind::breakpoint:
        force_signal(TOLL_SIGTRAP, TOLL_TRAP_BRKPT, f.vector, f.what, f.pc, f.pc);
        return;
    case FaultKind::arithmetic:
        force_signal(TOLL_SIGFPE, TOLL_FPE_INTDIV, f.vector, f.what, f.pc, f.pc);
        return;
    case FaultKind::protection:
        force_signal(TOLL_SIGSEGV, TOLL_SI_KERNEL, f.vector, f.what, f.pc, 0);
        return;
    }
}

} // namespace toll::proc
