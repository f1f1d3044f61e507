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
#include "kernel/arch/cpu.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/param.h"
#include "kernel/proc/process.h"
#include "kernel/vm/vmspace.h"
#include "lib/string.h"

extern "C" toll::Errno i386_copy_user(void* to, const void* from, size_t length);
extern "C" long i386_copy_string_user(char* to, const char* from, size_t size);
extern "C" bool i386_fast_copy(void* to, const void* from, size_t length);
extern "C" char i386_copy_user_access_1[], i386_copy_user_access_2[], i386_copy_user_fault[];
extern "C" char i386_copy_string_access[], i386_copy_string_fault[];
extern "C" toll::Counter i386_cr3_loads;

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
    // First let the VM fill a demand-zero page; only a real bad address
    // fails, and the copy returns the VM's reason.
    uint32_t address = read_cr2();
    Errno e = vm::handle_user_fault(proc::current_vm(), address, f.error & k_pf_write,
                                    f.error & k_pf_present);
    if (e == k_ok)
        return true;                               // retry the instruction
    f.eax = static_cast<uint32_t>(errno_value(e)); // what the fault exit returns
    f.eip = fault_exit;
    return true;
}

namespace {

// This CPU's slot of the kernel window for one slow copy: map() points it at
// a user page, and the destructor clears the entry, so that no kernel mapping
// of a user page outlives the copy (the page may be freed and reused once the
// copy is over). Each CPU has its own slot and page of the window (by
// Cpu::id), so copies on two CPUs never share one; a thread is not preempted
// in the kernel, so a step runs on the CPU whose slot map() filled (a fault
// in a later map() may sleep and resume elsewhere: the guard remembers every
// slot it used). The TLB entry is not flushed at the end: every map()
// invalidates before use, only this CPU uses this page, and the entry is not
// global, so the next CR3 load drops it.
class [[nodiscard]] KernelWindow {
  public:
    KernelWindow() = default;
    ~KernelWindow()
    {
        for (unsigned i = 0; i < k_max_cpus; ++i)
            if (m_used & (1u << i))
                *kernel_window_pte(i) = 0;
    }
    KernelWindow(const KernelWindow&) = delete;
    KernelWindow& operator=(const KernelWindow&) = delete;

    /// Maps the user page holding @p address (faulting it in if the VM
    /// allows) and returns the kernel address of @p address there; or why
    /// the page cannot be had (k_efault, k_enomem). (Out of line, as are all
    /// the window's steps, so that the fast path's code is not touched.)
    [[gnu::noinline]] Result<uint8_t*> map(uintptr_t address, bool write);

  private:
    unsigned m_used = 0; ///< the CPUs whose slot this copy filled
};

Result<uint8_t*> KernelWindow::map(uintptr_t address, bool write)
{
    vm::VmSpace* space = proc::current_vm();
    if (!space)
        return k_efault;
    uintptr_t page = address & ~uintptr_t(arch::k_page_size - 1);
    Optional<arch::Mapping> m = arch::pmap_extract(space->pmap, page);
    bool ok = m && m.value().prot != arch::k_prot_none &&
              (!write || (m.value().prot & arch::k_prot_write));
    if (!ok) {
        TRY(vm::vmspace_fault(space, address, write));
        m = arch::pmap_extract(space->pmap, page);
        if (!m)
            return k_efault;
    }
    // From here to the step's end nothing sleeps: this CPU's slot.
    auto id = static_cast<unsigned>(arch::cpu_local_word<offsetof(Cpu, id)>());
    uintptr_t window = KERNEL_WINDOW_BASE + id * arch::k_page_size;
    *kernel_window_pte(id) = static_cast<uint32_t>(m.value().pa) | k_pte_present | k_pte_write;
    m_used |= 1u << id;
    invalidate_page(window);
    g_window_maps.add();
    return reinterpret_cast<uint8_t*>(window) + (address - page);
}

// The 4/4 slow path's one walk: maps each user page of [user, user+length)
// in turn into the kernel window and hands @p step its piece (the kernel
// address and the length in that page, and the offset from @p user). @p step
// returns true to go on. Returns k_ok once @p step stopped or the range is
// done, or why a page could not be had. Every slow copy goes through here.
template <typename Step>
Errno for_each_user_page(uintptr_t user, size_t length, bool write, Step step)
{
    g_slow_copies.add();
    KernelWindow window;
    for (size_t done = 0; done < length;) {
        size_t in_page = arch::k_page_size - ((user + done) & (arch::k_page_size - 1));
        size_t n = length - done < in_page ? length - done : in_page;
        uint8_t* w = TRY(window.map(user + done, write));
        if (!step(w, n, done))
            return k_ok;
        done += n;
    }
    return k_ok;
}

// A slow copy: both sides are kernel addresses once the user page is in the
// window, and the string-move copy of copy_user.S is the quickest way across.
Errno slow_copy(uint8_t* kernel, uintptr_t user, size_t length, bool to_user)
{
    return for_each_user_page(user, length, to_user, [&](uint8_t* w, size_t n, size_t done) {
        if (to_user)
            i386_copy_user(w, kernel + done, n);
        else
            i386_copy_user(kernel + done, w, n);
        return true;
    });
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
    if (!ok)
        g_fast_faults.add();
    return ok;
}

// This CPU's copy buffer, in its trampoline block.
uint8_t* copy_buffer()
{
    return trampoline_of(arch::cpu_local_word<offsetof(Cpu, id)>()).copy_buffer;
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

using namespace toll::i386;

Errno copy_from_user(void* to, uintptr_t from, size_t length)
{
    if (!four_four())
        return i386_copy_user(to, reinterpret_cast<const void*>(from), length);
    if (length == 0)
        return k_ok;
    if (!has_user_space())
        return k_efault;
    if (length <= g_fast_max.value) {
        // This CPU's buffer, until the last read of it: a thread is not
        // preempted in the kernel and nothing here sleeps, so no other thread
        // uses the buffer meanwhile and this one stays on this CPU (an
        // interrupt may come, on the trampoline stack, and never touches it).
        uint8_t* buffer = copy_buffer();
        if (fast_copy(buffer, reinterpret_cast<const void*>(from), length)) {
            memcpy(to, buffer, length);
            return k_ok;
        }
    }
    return slow_copy(static_cast<uint8_t*>(to), from, length, false);
}

Errno copy_to_user(uintptr_t to, const void* from, size_t length)
{
    if (!four_four())
        return i386_copy_user(reinterpret_cast<void*>(to), from, length);
    if (length == 0)
        return k_ok;
    if (!has_user_space())
        return k_efault;
    if (length <= g_fast_max.value) {
        uint8_t* buffer = copy_buffer();
        memcpy(buffer, from, length);
        if (fast_copy(reinterpret_cast<void*>(to), buffer, length))
            return k_ok;
    }
    return slow_copy(static_cast<uint8_t*>(const_cast<void*>(from)), to, length, true);
}

Result<size_t> copy_string_from_user(char* to, uintptr_t from, size_t size)
{
    if (!four_four()) {
        return copy_string_result(
            i386_copy_string_user(to, reinterpret_cast<const char*>(from), size));
    }
    // Page by page through the window, stopping at the NUL.
    Optional<size_t> length;
    Errno e = for_each_user_page(from, size, false, [&](uint8_t* w, size_t n, size_t done) {
        for (size_t i = 0; i < n; ++i) {
            to[done + i] = static_cast<char>(w[i]);
            if (!w[i]) {
                length = done + i;
                return false;
            }
        }
        return true;
    });
    if (e != k_ok)
        return e;
    if (!length)
        return k_enametoolong;
    return length.value();
}

} // namespace toll::arch
