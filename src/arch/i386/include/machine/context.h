// What the core keeps per thread for the i386 port: the trap frame layout and
// the saved context of a switched-out thread. Included by the core as
// "machine/context.h"; each architecture has its own.
#pragma once
#include <stdint.h>

namespace toll::arch {

/// The registers saved on the kernel stack by every trap, interrupt and
/// system call (trap_entry.S builds it; the CPU pushes eip..user_ss).
struct TrapFrame {
    uint32_t gs, fs, es, ds;
    uint32_t edi, esi, ebp, esp_at_pusha, ebx, edx, ecx, eax; // pushal order
    uint32_t vector, error;
    uint32_t eip, cs, eflags;
    uint32_t user_esp, user_ss; ///< Present only for traps from user mode.

    /// True for a trap from user mode: CS's RPL is 3, or the CPU was in
    /// virtual-8086 mode (EFLAGS.VM), where CS holds a real-mode segment
    /// whose low bits mean nothing. The kernel's own BIOS calls trap into
    /// the vm86 monitor's tables, never here. Intel SDM Vol. 3, 20.2.
    bool from_user() const { return (cs & 3) == 3 || (eflags & k_eflags_vm); }
    static constexpr uint32_t k_eflags_vm = 1u << 17;
    uint32_t pc() const { return eip; }
    /// The interrupted user stack pointer (a trap from user mode only).
    uint32_t user_sp() const { return user_esp; }
};

/// A user TLS segment set by set_thread_area, as its GDT descriptor will
/// hold it (Intel SDM Vol. 3, 3.4.5).
struct TlsSegment {
    uint32_t base = 0;
    uint32_t limit = 0; ///< 20 bits, in bytes, or in 4 KB pages when @c flags has G
    uint8_t access = 0; ///< the descriptor's access byte; 0 for an empty slot
    uint8_t flags = 0;  ///< the descriptor's G, D/B and AVL bits (high nibble)

    static constexpr uint8_t k_access_present = 0x80, k_access_writable = 0x02;
    bool present() const { return access & k_access_present; }
    bool writable() const { return access & k_access_writable; }
};

/// A thread's x87/MMX/SSE registers as FXSAVE stores them. FXSAVE needs a
/// 16-byte-aligned 512-byte area; threads are only 8-byte aligned, so the
/// area starts at the first 16-byte boundary in @c raw (arch/i386/fpu/fpu.h).
struct FpuSlot {
    uint8_t raw[512 + 16];
    bool used = false; ///< The thread has FPU state of its own (it used the FPU since exec).
};

/// The saved state of a thread that is not running: the port's alone (what
/// the core keeps per thread is in proc::Thread).
struct ThreadContext {
    uint32_t esp = 0; ///< Kernel stack pointer saved by context_switch.
    TlsSegment tls;
    FpuSlot fpu; ///< Saved FPU registers (src/arch/i386/fpu/).
};

/// System call number and arguments as the i386 Linux ABI passes them.
inline uint32_t syscall_number(const TrapFrame& f)
{
    return f.eax;
}

} // namespace toll::arch
