// The names the virtual-memory core takes from the port interface
// (kernel/arch/physmem.h, kmem.h and pmap.h, all in namespace toll::arch),
// brought into toll::vm one by one, so that the core writes k_page_size and
// pmap_enter while the port declares and defines them in toll::arch only.
// The core's own headers include this file instead of the port's.
#pragma once
#include "kernel/arch/kmem.h"
#include "kernel/arch/physmem.h"
#include "kernel/arch/pmap.h"

namespace toll::vm {

// physmem.h: physical addresses and the page size.
using arch::k_page_shift;
using arch::k_page_size;
using arch::phys_to_virt;
using arch::PhysAddr;

// kmem.h: the direct map and the memory the allocator may use.
using arch::allocatable_floor;
using arch::direct_map_limit;
using arch::virt_to_phys;

// pmap.h: the page tables.
using arch::k_max_page_sizes;
using arch::k_prot_exec;
using arch::k_prot_icache_clean;
using arch::k_prot_none;
using arch::k_prot_read;
using arch::k_prot_write;
using arch::Mapping;
using arch::Pmap;
using arch::pmap_activate;
using arch::pmap_create;
using arch::pmap_current;
using arch::pmap_destroy;
using arch::pmap_enter;
using arch::pmap_extract;
using arch::pmap_next_mapped;
using arch::pmap_page_size;
using arch::pmap_page_size_count;
using arch::pmap_promote;
using arch::pmap_protect;
using arch::pmap_remove;
using arch::pmap_remove_page;
using arch::pmap_tlb_entries;
using arch::PmapPageSink;
using arch::Prot;
using arch::user_space_limit;

} // namespace toll::vm
