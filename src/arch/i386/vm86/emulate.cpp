// The vm86 monitor's #GP emulation: the IOPL-sensitive instructions of the
// BIOS's real-mode code, carried out on its behalf with a virtual IF.
// Intel SDM Vol. 3, 20.2.7: in vm86 mode with IOPL < 3 (and CR4.VME off),
// CLI, STI, PUSHF, POPF, INT n and IRET raise #GP(0) instead of running.
#include "arch/i386/vm86/emulate.h"

namespace toll::i386 {
namespace {

// Opcodes. Intel SDM Vol. 2, appendix A (one-byte opcode map).
constexpr uint8_t k_op_operand_size = 0x66, k_op_address_size = 0x67;
constexpr uint8_t k_op_cli = 0xFA, k_op_sti = 0xFB, k_op_pushf = 0x9C, k_op_popf = 0x9D;
constexpr uint8_t k_op_int3 = 0xCC, k_op_int = 0xCD, k_op_iret = 0xCF, k_op_hlt = 0xF4;
constexpr uint32_t k_int3_vector = 3;
/// At most this many prefixes are skipped before the opcode (a legal
/// instruction is at most 15 bytes long, Intel SDM Vol. 2, 2.3.11).
constexpr unsigned k_max_prefixes = 14;

bool is_ignorable_prefix(uint8_t b)
{
    // Segment overrides, LOCK and REP: meaningless on the instructions emulated here.
    return b == 0x26 || b == 0x2E || b == 0x36 || b == 0x3E || b == 0x64 || b == 0x65 ||
           b == 0xF0 || b == 0xF2 || b == 0xF3 || b == k_op_address_size;
}

uint32_t linear(uint32_t segment, uint32_t offset)
{
    return ((segment & 0xFFFF) << 4) + (offset & 0xFFFF);
}

// The real-mode stack: SS:SP, 16-bit SP that wraps within its segment.
[[maybe_unused]] void push16(Vm86Frame& f, uint16_t value)
{
    f.esp = (f.esp & 0xFFFF0000) | ((f.esp - 2) & 0xFFFF);
    uint8_t* p = vm86_memory(linear(f.ss, f.esp));
    p[0] = static_cast<uint8_t>(value);
    p[1] = static_cast<uint8_t>(value >> 8);
}

[[maybe_unused]] uint16_t pop16(Vm86Frame& f)
{
    const uint8_t* p = vm86_memory(linear(f.ss, f.esp));
    f.esp = (f.esp & 0xFFFF0000) | ((f.esp + 2) & 0xFFFF);
    return static_cast<uint16_t>(p[0] | p[1] << 8);
}

[[maybe_unused]] void push32(Vm86Frame& f, uint32_t value)
{
    push16(f, static_cast<uint16_t>(value >> 16));
    push16(f, static_cast<uint16_t>(value));
}

[[maybe_unused]] uint32_t pop32(Vm86Frame& f)
{
    uint32_t low = pop16(f);
    return low | static_cast<uint32_t>(pop16(f)) << 16;
}

// The flags as real-mode code should see them: the virtual IF in place of
// the real one, IOPL shown as 0, and never VM or RF.
[[maybe_unused]] uint32_t visible_flags(const Vm86Frame& f, const Vm86State& s)
{
    uint32_t flags = f.eflags & ~(k_vm86_flag_if | k_vm86_flag_iopl | k_vm86_flag_vm | (1u << 16));
    return s.virtual_if ? flags | k_vm86_flag_if : flags;
}

// Takes popped flags: the arithmetic ones are real, IF becomes the virtual IF.
[[maybe_unused]] void load_flags(Vm86Frame& f, Vm86State& s, uint32_t popped)
{
    f.eflags = (f.eflags & ~k_vm86_flags_arith) | (popped & k_vm86_flags_arith);
    s.virtual_if = (popped & k_vm86_flag_if) != 0;
}

[[maybe_unused]] void advance(Vm86Frame& f, uint32_t bytes)
{
    f.eip = (f.eip + bytes) & 0xFFFF;
}

} // namespace

const char* vm86_trap_kind_name(Vm86TrapKind kind)
{
    switch (kind) {
    case Vm86TrapKind::cli:
        return "cli";
    case Vm86TrapKind::sti:
        return "sti";
    case Vm86TrapKind::pushf:
        return "pushf";
    case Vm86TrapKind::popf:
        return "popf";
    case Vm86TrapKind::intn:
        return "int";
    case Vm86TrapKind::iret:
        return "iret";
    case Vm86TrapKind::hlt:
        return "hlt";
    default:
        return "other";
    }
}

Vm86Action vm86_emulate(Vm86Frame& f, Vm86State& s)
{
    // Decode: skip prefixes, remembering 0x66 (a 32-bit operand in 16-bit code).
    uint32_t start = linear(f.cs, f.eip);
    bool operand32 = false;
    unsigned length = 0;
    uint8_t op = *vm86_memory(start);
    while (length < k_max_prefixes && (op == k_op_operand_size || is_ignorable_prefix(op))) {
        operand32 |= op == k_op_operand_size;
        op = *vm86_memory(linear(f.cs, f.eip + ++length));
    }
    ++length; // the opcode itself
    s.last_kind = Vm86TrapKind::other;
    if (op == k_op_hlt) {
        s.last_kind = Vm86TrapKind::hlt;
        // Only the monitor's own HLT ends the call; a BIOS waiting for an
        // interrupt would wait forever with interrupts off.
        return start == s.stop_linear ? Vm86Action::done : Vm86Action::failed;
    }
    // LAB vm86 BEGIN: emulate CLI, STI, PUSHF, POPF, INT n, INT3 and IRET (16- and 32-bit operands)
    // with the virtual IF; return resume, or failed for anything else
    switch (op) {
    case k_op_cli:
        s.last_kind = Vm86TrapKind::cli;
        s.virtual_if = false;
        advance(f, length);
        return Vm86Action::resume;
    case k_op_sti:
        s.last_kind = Vm86TrapKind::sti;
        s.virtual_if = true;
        advance(f, length);
        return Vm86Action::resume;
    case k_op_pushf:
        s.last_kind = Vm86TrapKind::pushf;
        if (operand32)
            push32(f, visible_flags(f, s));
        else
            push16(f, static_cast<uint16_t>(visible_flags(f, s)));
        advance(f, length);
        return Vm86Action::resume;
    case k_op_popf:
        s.last_kind = Vm86TrapKind::popf;
        load_flags(f, s, operand32 ? pop32(f) : pop16(f));
        advance(f, length);
        return Vm86Action::resume;
    case k_op_int:
    case k_op_int3: {
        // Reflect through the real-mode vector table at linear 0: push FLAGS,
        // CS and the return IP, clear IF and TF, jump to the handler.
        s.last_kind = Vm86TrapKind::intn;
        uint32_t vector = k_int3_vector;
        if (op == k_op_int) {
            vector = *vm86_memory(linear(f.cs, f.eip + length));
            ++length;
        }
        advance(f, length);
        push16(f, static_cast<uint16_t>(visible_flags(f, s)));
        push16(f, static_cast<uint16_t>(f.cs));
        push16(f, static_cast<uint16_t>(f.eip));
        s.virtual_if = false;
        f.eflags &= ~k_vm86_flag_tf;
        const uint8_t* ivt = vm86_memory(vector * 4);
        f.eip = static_cast<uint32_t>(ivt[0] | ivt[1] << 8);
        f.cs = static_cast<uint32_t>(ivt[2] | ivt[3] << 8);
        return Vm86Action::resume;
    }
    case k_op_iret:
        s.last_kind = Vm86TrapKind::iret;
        if (operand32) {
            f.eip = pop32(f) & 0xFFFF;
            f.cs = pop32(f) & 0xFFFF;
            load_flags(f, s, pop32(f));
        } else {
            f.eip = pop16(f);
            f.cs = pop16(f);
            load_flags(f, s, pop16(f));
        }
        return Vm86Action::resume;
    default:
        return Vm86Action::failed;
    }
    // LAB vm86 STUB
    // (void)operand32, (void)length;
    // return Vm86Action::failed;
    // LAB vm86 END
}

} // namespace toll::i386
