// i386 user-memory access under the 3/1 split: the kernel reaches user pages
// directly; a fault on a labelled instruction of copy_user.S is turned into a
// failure return instead of a panic.
#include "arch/i386/trap.h"
#include "kernel/kern/arch_uaccess.h"
#include "kernel/vm/vmspace.h"

extern "C" bool i386_copy_user(void* to, const void* from, size_t length);
extern "C" long i386_copy_string_user(char* to, const char* from, size_t size);
extern "C" char i386_copy_user_access_1[], i386_copy_user_access_2[], i386_copy_user_fault[];
extern "C" char i386_copy_string_access[], i386_copy_string_fault[];

namespace toll::i386 {

bool fixup_user_access(arch::TrapFrame& f)
{
    auto at = [&](const char* label) { return f.eip == reinterpret_cast<uint32_t>(label); };
    uint32_t fault_exit = 0;
    if (at(i386_copy_user_access_1) || at(i386_copy_user_access_2))
        fault_exit = reinterpret_cast<uint32_t>(i386_copy_user_fault);
    else if (at(i386_copy_string_access))
        fault_exit = reinterpret_cast<uint32_t>(i386_copy_string_fault);
    else
        return false;
    // First let the VM fill a demand-zero page; only a real bad address fails.
    uint32_t address;
    asm volatile("movl %%cr2, %0" : "=r"(address));
    if (toll::vm::handle_user_fault(address, f.error & k_pf_write, f.error & k_pf_present))
        return true; // retry the instruction
    f.eip = fault_exit;
    return true;
}

} // namespace toll::i386

namespace toll::arch {

bool copy_from_user(void* to, uintptr_t from, size_t length)
{
    return i386_copy_user(to, reinterpret_cast<const void*>(from), length);
}

bool copy_to_user(uintptr_t to, const void* from, size_t length)
{
    return i386_copy_user(reinterpret_cast<void*>(to), from, length);
}

long copy_string_from_user(char* to, uintptr_t from, size_t size)
{
    return i386_copy_string_user(to, reinterpret_cast<const char*>(from), size);
}

} // namespace toll::arch
