// The per-CPU pointer: one register per CPU that holds the address of that
// CPU's toll::Cpu (kernel/kern/cpu.h). The port defines the inline read in
// its include/machine/cpu_local.h (i386: through the %fs segment, whose base
// is the CPU's own GDT entry; arm64: TPIDR_EL1) and sets it in cpu_init.
#pragma once
#ifdef TOLL_HOST_TEST
#include <stddef.h>
#include <stdint.h>
namespace toll::arch {
// The host tests (tests/unit) run kernel sources on no CPU of the kernel's:
// no per-CPU block, and their spinlocks are stubs that touch none.
inline void* cpu_local()
{
    return nullptr;
}
template <size_t Offset>
inline uintptr_t cpu_local_word()
{
    return 0;
}
} // namespace toll::arch
#else
#include "machine/cpu_local.h"
#endif

namespace toll::arch {

/// This CPU's per-CPU block, as the port's register holds it. Valid once
/// cpu_init() (or, on another CPU, its start-up) has set the register.
inline void* cpu_local();

/// The pointer-sized word at byte @p Offset of this CPU's block, read in as
/// few instructions as the port can (i386: one, through %fs).
template <size_t Offset>
inline uintptr_t cpu_local_word();

} // namespace toll::arch
