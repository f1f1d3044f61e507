// The heart of the vm86 monitor: what it does when the BIOS, running in
// virtual-8086 mode at IOPL 0, executes an instruction that raises #GP.
// Plain C++ over a memory accessor, so the host tests run it too.
#pragma once
#include <stdint.h>

namespace toll::i386 {

/// The stack of the monitor after a trap from vm86 mode: what vm86_entry.S
/// pushes (general registers, vector, error code) below what the CPU pushes.
/// Intel SDM Vol. 3, 20.3.1 and figure 6-5: leaving vm86 mode, the CPU also
/// pushes ES, DS, FS and GS, and then loads them with null selectors.
struct Vm86Frame {
    uint32_t edi, esi, ebp, esp_at_pusha, ebx, edx, ecx, eax; // pushal order
    uint32_t vector, error;
    uint32_t eip, cs, eflags, esp, ss; // the CPU's frame (vm86: all of it)
    uint32_t es, ds, fs, gs;
};

// Intel SDM Vol. 1, 3.4.3: EFLAGS bits the monitor looks at.
constexpr uint32_t k_vm86_flag_tf = 1u << 8, k_vm86_flag_if = 1u << 9, k_vm86_flag_iopl = 3u << 12,
                   k_vm86_flag_nt = 1u << 14, k_vm86_flag_vm = 1u << 17, k_vm86_flag_ac = 1u << 18;
/// The flags a real-mode program may change with POPF or IRET: CF, PF, AF,
/// ZF, SF, DF and OF. IF is virtual; TF, IOPL, NT and VM stay the monitor's.
constexpr uint32_t k_vm86_flags_arith = 0x0CD5;

/// What the monitor decided about one trap.
enum class Vm86Action {
    resume, ///< Emulated: return to vm86 mode at the updated CS:IP.
    done,   ///< The HLT at the monitor's stop address: the call is over.
    failed, ///< Something the monitor does not emulate: abandon the call.
};

/// Which instruction a trap was, for the counters vm86.traps.<kind>.
enum class Vm86TrapKind { cli, sti, pushf, popf, intn, iret, hlt, other, count };

/// The monitor's state for one call.
struct Vm86State {
    bool virtual_if = false;  ///< The IF real-mode code believes it has.
    uint32_t stop_linear = 0; ///< Linear address of the HLT that ends the call.
    Vm86TrapKind last_kind = Vm86TrapKind::other;
};

/// Returns a pointer to the byte at vm86 linear address @p linear (below
/// 1 MB + 64 KB). The kernel's is the direct map; the host tests' an array.
uint8_t* vm86_memory(uint32_t linear);

/// Emulates the instruction at CS:IP of @p frame, which raised #GP in vm86
/// mode: CLI, STI, PUSHF, POPF, INT n, INT3, IRET (each with the 0x66
/// operand-size prefix where it means something) using @p state's virtual
/// IF, and the HLT at the stop address. Updates the frame (registers, flags,
/// stack, CS:IP) as the real-mode CPU would have.
Vm86Action vm86_emulate(Vm86Frame& frame, Vm86State& state);

/// Counter names of the trap kinds ("cli", "int", ...).
const char* vm86_trap_kind_name(Vm86TrapKind kind);

} // namespace toll::i386
