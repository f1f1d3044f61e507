// The kernel's own profiler, in counting mode: booted with profile=count,
// the kernel runs each trap's C code one instruction at a time while a
// program has counting on (the profile system call, which the benchmarks
// make around their timed loop), and counts how often each kernel
// instruction address executed. The counts are exact, whatever the
// interrupt mask (a timer that samples the program counter would see none
// of the kernel's work: its system calls run with interrupts masked), so a
// function's share of them is its share of the path's kernel instructions.
// The arch supplies the stepping (on i386 the trap flag; an arch without it
// refuses counting). tools/bench --profile drives it and names the
// functions.
#pragma once
#include <stdint.h>

namespace toll {

/// Whether the kernel was booted with profile=count (read once, early).
bool profile_booted();

/// Whether counting is on now: the arch steps the kernel while it is.
/// Inline: every trap asks.
inline bool profile_counting()
{
    extern bool g_profile_counting;
    return __atomic_load_n(&g_profile_counting, __ATOMIC_RELAXED);
}

/// Counts one executed kernel instruction at @p pc (the arch's step trap).
void profile_count(uintptr_t pc);

/// Counts a call of the function at @p callee that will return to @p
/// return_address (the arch's step trap, at a function's first instruction).
void profile_count_call(uintptr_t callee, uintptr_t return_address);

/// The profile system call: @p on starts counting (clearing the counts);
/// off stops it and prints the counts as PROFILE records
/// (`PROFILE <pc in hex> <count>`, `PROFILE call <callee> <return address>
/// <count>`, then `PROFILE dropped <count>` and `PROFILE total <count>`), which tools/bench
/// --profile reads. Returns 0, or -ENODEV when the kernel was booted without profile=count or the
/// arch cannot step the kernel in this configuration.
long profile_control(bool on);

} // namespace toll

namespace toll::arch {
/// Whether this arch can step its kernel in the layout it booted.
bool profile_can_step();
/// Stops stepping the code that runs on from here (counting just stopped).
void profile_step_stop();
} // namespace toll::arch
