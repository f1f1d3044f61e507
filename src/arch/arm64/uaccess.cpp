// arm64 user-memory access: user space is mapped in the same TTBR0 tables as
// the kernel's identity map, so the kernel reaches user pages directly; a
// data abort on a labelled instruction of copy_user.S becomes a failure
// return instead of a panic.
#include "kernel/arch/uaccess.h"
#include "arch/arm64/trap.h"
#include "kernel/arch/pmap.h"
#include "kernel/proc/process.h"
#include "kernel/vm/vmspace.h"

extern "C" toll::Errno arm64_copy_user(void* to, const void* from, size_t length);
extern "C" long arm64_copy_string_user(char* to, const char* from, size_t size);
extern "C" char arm64_copy_user_load[], arm64_copy_user_store[], arm64_copy_user_fault[];
extern "C" char arm64_copy_string_access[], arm64_copy_string_fault[];

namespace toll::arm64 {
namespace {

// Arm ARM, ESR_ELx ISS of data aborts: WnR (bit 6) is set for a write; the
// fault status code 0b0011xx (bits [5:0]) is a permission fault, i.e. the
// page was mapped.
constexpr uint64_t k_iss_wnr = 1u << 6;
constexpr uint64_t k_fsc_mask = 0x3C, k_fsc_permission = 0x0C;

// The EL1 data-abort hook: only faults in the copy routines, on user addresses.
bool fixup_user_access(arch::TrapFrame& f)
{
    auto at = [&](const char* label) { return f.elr == reinterpret_cast<uint64_t>(label); };
    uint64_t fault_exit;
    if (at(arm64_copy_user_load) || at(arm64_copy_user_store))
        fault_exit = reinterpret_cast<uint64_t>(arm64_copy_user_fault);
    else if (at(arm64_copy_string_access))
        fault_exit = reinterpret_cast<uint64_t>(arm64_copy_string_fault);
    else
        return false;
    if (f.far >= arch::user_space_limit())
        return false; // a kernel address: the caller's range check failed
    bool write = f.esr & k_iss_wnr;
    bool present = (f.esr & k_fsc_mask) == k_fsc_permission;
    // First let the VM fill a demand-zero page; only a real bad address
    // fails, and the copy returns the VM's reason.
    Errno e = vm::handle_user_fault(proc::current_vm(), f.far, write, present);
    if (e != k_ok) {
        f.x[0] = static_cast<uint64_t>(errno_value(e)); // what the fault exit returns
        f.elr = fault_exit;
    }
    return true;
}

} // namespace

void uaccess_init()
{
    set_sync_hook(k_ec_data_abort_el1, fixup_user_access);
}

} // namespace toll::arm64

namespace toll::arch {

Errno copy_from_user(void* to, uintptr_t from, size_t length)
{
    return arm64_copy_user(to, reinterpret_cast<const void*>(from), length);
}

Errno copy_to_user(uintptr_t to, const void* from, size_t length)
{
    return arm64_copy_user(reinterpret_cast<void*>(to), from, length);
}

Result<size_t> copy_string_from_user(char* to, uintptr_t from, size_t size)
{
    long n = arm64_copy_string_user(to, reinterpret_cast<const char*>(from), size);
    return copy_string_result(n);
}

} // namespace toll::arch
