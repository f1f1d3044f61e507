// What kernel sources need to run inside the host tests: a panic that throws,
// and simulated physical memory behind arch::phys_to_virt.
#pragma once
#include "kernel/arch/physmem.h"
#include "kernel/arch/pmap.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/result.h"
#include <cstddef>
#include <stdexcept>
#include <string>

namespace toll::test {

/// Thrown by the host toll::panic (and so by a failed TOLL_ASSERT), so that a
/// test can REQUIRE_THROWS that the kernel code caught a broken invariant.
struct KernelPanic : std::runtime_error {
    explicit KernelPanic(const std::string& message) : std::runtime_error(message) {}
};

/// Simulated physical memory [base, base + size): an ordinary host array that
/// arch::phys_to_virt maps while this object lives. One at a time. An access
/// outside it throws std::out_of_range, which catches address arithmetic bugs.
class SimulatedMemory {
  public:
    SimulatedMemory(arch::PhysAddr base, size_t size);
    ~SimulatedMemory();
    SimulatedMemory(const SimulatedMemory&) = delete;
    SimulatedMemory& operator=(const SimulatedMemory&) = delete;

    arch::PhysAddr base() const { return m_base; }
    size_t size() const { return m_size; }
    /// The host array standing in for physical address base().
    unsigned char* host() const { return m_memory; }

  private:
    arch::PhysAddr m_base;
    size_t m_size;
    unsigned char* m_memory;
};

/// The kernel counter called @p name, found in the linker-built table (GNU
/// ld provides __start_/__stop_ for the toll_counters section); throws,
/// failing the test, if there is none.
Counter& counter_named(const char* name);

/// A mapping pmap_extract found, field by field into whichever of @p pa,
/// @p prot and @p psind is not null; false if there was none. For tests
/// that check the fields one by one.
inline bool extract_into(Optional<arch::Mapping> m, arch::PhysAddr* pa, unsigned* prot,
                         unsigned* psind = nullptr)
{
    if (!m)
        return false;
    if (pa)
        *pa = m.value().pa;
    if (prot)
        *prot = m.value().prot;
    if (psind)
        *psind = m.value().psind;
    return true;
}

/// The address a successful allocation returned. A failed one throws, which
/// fails the test with the errno: for allocations the test expects to work.
inline arch::PhysAddr allocated(Result<arch::PhysAddr> result)
{
    if (!result)
        throw std::runtime_error("allocation failed, errno " +
                                 std::to_string(errno_value(result.error())));
    return result.value();
}

/// The Errno of a failed allocation, k_ok if it succeeded (for CHECKs).
inline Errno failure(Result<arch::PhysAddr> result)
{
    return result.error();
}

} // namespace toll::test
