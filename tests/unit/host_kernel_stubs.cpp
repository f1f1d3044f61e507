// Host versions of the kernel services that kernel sources under test call:
// panic (throws), and phys_to_virt and virt_to_phys over simulated memory.
#include "host_kernel_stubs.h"
#include "kernel/arch/kmem.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/section.h"
#include "kernel/kern/spinlock.h"
#include "kernel/vm/failpoint.h"
#include "lib/format.h"
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

TOLL_SECTION_BOUNDS(toll::Counter, toll_counters);

namespace toll {

void panic(const char* fmt, ...)
{
    char message[256];
    va_list args;
    va_start(args, fmt);
    lib::vsnformat(message, sizeof message, fmt, args);
    va_end(args);
    throw test::KernelPanic(message);
}

void set_panic_hook(PanicHook)
{
}

// One thread on the host, and no CPU of the kernel's: the spinlocks of the
// kernel sources under test only count.
void Spinlock::lock()
{
    ++m_acquisitions;
    m_locked = 1;
}

void Spinlock::unlock()
{
    m_locked = 0;
}

bool Spinlock::held_here() const
{
    return m_locked != 0;
}

// The kernel's fault injector: never on the host (no global allocator there).
bool vm::fail_alloc_now()
{
    return false;
}

namespace {
test::SimulatedMemory* g_memory;
constexpr int k_garbage = 0xa5;
} // namespace

void* arch::phys_to_virt(PhysAddr pa)
{
    if (g_memory == nullptr || pa < g_memory->base() || pa - g_memory->base() >= g_memory->size())
        throw std::out_of_range("phys_to_virt: address outside simulated memory");
    return g_memory->host() + (pa - g_memory->base());
}

arch::PhysAddr arch::virt_to_phys(const void* kernel_address)
{
    auto* p = static_cast<const unsigned char*>(kernel_address);
    if (g_memory == nullptr || p < g_memory->host() ||
        static_cast<size_t>(p - g_memory->host()) >= g_memory->size())
        throw std::out_of_range("virt_to_phys: pointer outside simulated memory");
    return g_memory->base() + static_cast<arch::PhysAddr>(p - g_memory->host());
}

namespace test {

Counter& counter_named(const char* name)
{
    for (Counter* c = __start_toll_counters; c < __stop_toll_counters; ++c)
        if (std::strcmp(c->name, name) == 0)
            return *c;
    throw std::runtime_error(std::string("no counter named ") + name);
}

SimulatedMemory::SimulatedMemory(arch::PhysAddr base, size_t size) : m_base(base), m_size(size)
{
    if (g_memory != nullptr)
        throw std::logic_error("only one SimulatedMemory at a time");
    m_memory = static_cast<unsigned char*>(std::aligned_alloc(arch::k_page_size, size));
    if (m_memory == nullptr)
        throw std::bad_alloc();
    // Garbage, not zeroes: the allocator must not rely on memory being clear.
    std::memset(m_memory, k_garbage, size);
    g_memory = this;
}

SimulatedMemory::~SimulatedMemory()
{
    g_memory = nullptr;
    std::free(m_memory);
}

} // namespace test
} // namespace toll
