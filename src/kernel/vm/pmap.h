// The machine-dependent page tables ("pmap", after BSD): the interface the
// core's virtual memory uses, implemented by each architecture. A pmap only
// records translations; which pages exist is the core's business.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "kernel/kern/errno.h"
#include "kernel/vm/physmem.h"

namespace toll::vm {

/// Access rights of a mapping (combinable).
enum Prot : unsigned {
    k_prot_none = 0,
    k_prot_read = 1,
    k_prot_write = 2,
    k_prot_exec = 4,
};

/// One address space's page tables (defined by the architecture).
struct Pmap;

/// Creates the page tables of a new user address space (kernel part shared).
/// Returns nullptr when memory is short.
Pmap* pmap_create();

/// Frees the page tables of @p pmap (not the pages it maps).
void pmap_destroy(Pmap* pmap);

/// Maps the page at user address @p va to physical page @p pa with @p prot,
/// replacing any previous mapping. Returns k_enomem if a page table cannot
/// be allocated.
Errno pmap_enter(Pmap* pmap, uintptr_t va, PhysAddr pa, unsigned prot);

/// Unmaps the page at @p va; returns the physical page it mapped, or
/// PhysAllocator::k_none if nothing was mapped there.
PhysAddr pmap_remove(Pmap* pmap, uintptr_t va);

/// Changes the rights of the page at @p va, if mapped.
void pmap_protect(Pmap* pmap, uintptr_t va, unsigned prot);

/// Looks up @p va: true and the physical page and rights if mapped.
bool pmap_extract(Pmap* pmap, uintptr_t va, PhysAddr* pa, unsigned* prot);

/// Makes @p pmap the current address space (loads CR3 / TTBR0 if it changes).
void pmap_activate(Pmap* pmap);

/// The pmap that is active now.
Pmap* pmap_current();

/// The lowest address above user space (0xC0000000 under the 3/1 split).
uintptr_t user_space_limit();

} // namespace toll::vm
