// vm.walks=count: the page walks an instruction count cannot see. At every
// CR3 load the accessed bits of the page tables in use are counted and
// cleared, so each count is the number of entries the (emulated) MMU walked
// since the previous load: a lower bound on the TLB misses of that stretch.
#pragma once
#include <stdint.h>

/// True under vm.walks=count (read once by walks_init; trap_entry.S reads it).
extern "C" bool i386_walks_counting;

namespace toll::i386 {

/// Reads vm.walks= from the command line; called once the tables exist.
void walks_init();

/// Counts the accessed bits set in the current address space's directories
/// and page tables (the kernel's and the user's view) into vm.walks.entries
/// and vm.walks.translations, and clears them. Called just before each CR3
/// load (and just after the entry path's); does nothing unless counting.
extern "C" void i386_walks_harvest();

/// The hook at a CR3 load: one test when not counting.
inline void walks_at_cr3_load()
{
    if (i386_walks_counting)
        i386_walks_harvest();
}

} // namespace toll::i386
