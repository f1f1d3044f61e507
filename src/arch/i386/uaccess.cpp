// i386 user-memory access under each layout.
//  - 3/1 and 3/1-pti: the kernel's directory maps user memory, so the kernel
//    copies directly; a fault on a labelled instruction of copy_user.S is
//    turned into a failure return instead of a panic.
//  - 4/4: the kernel's directory holds no user memory. Small copies take the
//    fast path through the trampoline (i386_fast_copy in copy_fast.S: load
//    the user's CR3, copy via the shared copy buffer, load the kernel's);
//    large ones, and any that fault there, take the slow path that maps each
//    user page into a kernel window. vm.copy_fast_max= sets the threshold.
#include "kernel/arch/uaccess.h"
#include "arch/i386/cpu.h"
#include "arch/i386/mmu.h"
#include "arch/i386/trampoline.h"
#include "arch/i386/trap.h"
#include "arch/i386/walks.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/param.h"
#include "kernel/proc/process.h"
#include "kernel/vm/vmspace.h"
#include "lib/string.h"

extern "C" bool i386_copy_user(void* to, const void* from, size_t length);
extern "C" long i386_copy_string_user(char* to, const char* from, size_t size);
extern "C" bool i386_fast_copy(void* to, const void* from, size_t length);
extern "C" char i386_copy_user_access_1[], i386_copy_user_access_2[], i386_copy_user_fault[];
extern "C" char i386_copy_string_access[], i386_copy_string_fault[];
extern "C" toll::Counter i386_cr3_loads, i386_tlb_full_flushes;

namespace toll::i386 {
namespace {

TOLL_PARAM(param_fast_max, "vm.copy_fast_max",
           "4/4: copies of at most this many bytes go through the trampoline (0-4096)");
TOLL_COUNTER(g_fast_copies, "vm.copy.fast");
TOLL_COUNTER(g_fast_faults, "vm.copy.fast_faults");
TOLL_COUNTER(g_slow_copies, "vm.copy.slow");
TOLL_COUNTER(g_window_maps, "vm.copy.window_maps");
// The threshold in force, readable from user space like any counter.
TOLL_GAUGE(g_fast_max, "vm.copy.fast_max");

constexpr size_t k_default_fast_max = 256;

} // namespace

void uaccess_init()
{
    unsigned long n = param_get_ulong("vm.copy_fast_max", k_default_fast_max);
    g_fast_max.set(n > TRAMPOLINE_COPY_BUFFER ? TRAMPOLINE_COPY_BUFFER : n);
}

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
    uint32_t address = read_cr2();
    if (vm::handle_user_fault(proc::current_vm(), address, f.error & k_pf_write,
                              f.error & k_pf_present) == k_ok)
        return true; // retry the instruction
    f.eip = fault_exit;
    return true;
}

namespace {

// Slot 0 of the kernel window for one slow copy: map() points it at a user
// page, and the destructor clears the entry, so that no kernel mapping of a
// user page outlives the copy (the page may be freed and reused once the
// copy is over). The TLB entry is not flushed there: every map() invalidates
// before use, and the entry is not global, so the next CR3 load drops it.
class [[nodiscard]] KernelWindow {
  public:
    KernelWindow() = default;
    ~KernelWindow() { *g_slot = 0; }
    KernelWindow(const KernelWindow&) = delete;
    KernelWindow& operator=(const KernelWindow&) = delete;

    /// Maps the user page holding @p address (faulting it in if the VM
    /// allows) and returns the kernel address of @p address there, or
    /// nullptr if the page cannot be had. (Out of line, as are all the
    /// window's steps, so that the fast path's code is not touched.)
    [[gnu::noinline]] static uint8_t* map(uintptr_t address, bool write);

  private:
    // No state: the guard costs the fast path no register, and clearing a
    // clear entry is harmless. The entry's address is a link-time constant,
    // looked up once.
    static uint32_t* const g_slot;
};

uint32_t* const KernelWindow::g_slot = kernel_window_pte(0);

uint8_t* KernelWindow::map(uintptr_t address, bool write)
{
    proc::Process* p = proc::current_process();
    if (!p || !p->vm)
        return nullptr;
    uintptr_t page = address & ~uintptr_t(vm::k_page_size - 1);
    vm::PhysAddr pa;
    unsigned prot;
    bool ok = vm::pmap_extract(p->vm->pmap, page, &pa, &prot) && prot != vm::k_prot_none &&
              (!write || (prot & vm::k_prot_write));
    if (!ok) {
        if (vm::vmspace_fault(p->vm, address, write) != k_ok ||
            !vm::pmap_extract(p->vm->pmap, page, &pa, &prot))
            return nullptr;
    }
    *kernel_window_pte(0) = static_cast<uint32_t>(pa) | k_pte_present | k_pte_write;
    invalidate_page(KERNEL_WINDOW_BASE);
    g_window_maps.add();
    return reinterpret_cast<uint8_t*>(KERNEL_WINDOW_BASE) + (address - page);
}

// The 4/4 slow path: page by page through the kernel window.
bool slow_copy(uint8_t* kernel, uintptr_t user, size_t length, bool to_user)
{
    g_slow_copies.add();
    KernelWindow window;
    while (length) {
        size_t in_page = vm::k_page_size - (user & (vm::k_page_size - 1));
        size_t n = length < in_page ? length : in_page;
        uint8_t* w = window.map(user, to_user);
        if (!w)
            return false;
        // Both sides are kernel addresses now: the string-move copy of
        // copy_user.S is the quickest way across.
        if (to_user)
            i386_copy_user(w, kernel, n);
        else
            i386_copy_user(kernel, w, n);
        kernel += n;
        user += n;
        length -= n;
    }
    return true;
}

// The 4/4 fast path; false if the copy faulted (the caller retries slowly,
// where the VM can fill demand-zero pages).
bool fast_copy(void* to, const void* from, size_t length)
{
    g_fast_copies.add();
    walks_at_cr3_load(); // the copy loads the user's CR3, then the kernel's
    bool ok = i386_fast_copy(to, from, length);
    walks_at_cr3_load();
    i386_cr3_loads.add(2);
    i386_tlb_full_flushes.add(2);
    if (!ok)
        g_fast_faults.add();
    return ok;
}

bool four_four()
{
    return layout() == Layout::split_4_4;
}

// Under 4/4 a kernel thread has no user space at all: every copy fails.
bool has_user_space()
{
    proc::Process* p = proc::current_process();
    return p && p->vm;
}

} // namespace
} // namespace toll::i386

namespace toll::arch {
namespace {

// copy_user.S's protocol: the length, -1 on a fault, -2 without a NUL.
Result<size_t> string_result(long n)
{
    if (n == -1)
        return k_efault;
    if (n < 0)
        return k_enametoolong;
    return static_cast<size_t>(n);
}

} // namespace

using namespace toll::i386;

bool copy_from_user(void* to, uintptr_t from, size_t length)
{
    if (!four_four())
        return i386_copy_user(to, reinterpret_cast<const void*>(from), length);
    if (length == 0)
        return true;
    if (!has_user_space())
        return false;
    if (length <= g_fast_max.value &&
        fast_copy(trampoline_copy_buffer, reinterpret_cast<const void*>(from), length)) {
        memcpy(to, trampoline_copy_buffer, length);
        return true;
    }
    return slow_copy(static_cast<uint8_t*>(to), from, length, false);
}

bool copy_to_user(uintptr_t to, const void* from, size_t length)
{
    if (!four_four())
        return i386_copy_user(reinterpret_cast<void*>(to), from, length);
    if (length == 0)
        return true;
    if (!has_user_space())
        return false;
    if (length <= g_fast_max.value) {
        memcpy(trampoline_copy_buffer, from, length);
        if (fast_copy(reinterpret_cast<void*>(to), trampoline_copy_buffer, length))
            return true;
    }
    return slow_copy(static_cast<uint8_t*>(const_cast<void*>(from)), to, length, true);
}

Result<size_t> copy_string_from_user(char* to, uintptr_t from, size_t size)
{
    if (!four_four())
        return string_result(i386_copy_string_user(to, reinterpret_cast<const char*>(from), size));
    // Page by page through the window, stopping at the NUL.
    g_slow_copies.add();
    KernelWindow window;
    size_t done = 0;
    while (done < size) {
        uint8_t* w = window.map(from + done, false);
        if (!w)
            return k_efault;
        size_t in_page = vm::k_page_size - ((from + done) & (vm::k_page_size - 1));
        for (size_t i = 0; i < in_page && done < size; ++i, ++done) {
            to[done] = static_cast<char>(w[i]);
            if (!w[i])
                return done;
        }
    }
    return k_enametoolong;
}

} // namespace toll::arch
