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

    bool from_user() const { return (cs & 3) == 3; }
    uint32_t pc() const { return eip; }
};

/// A user TLS segment set by set_thread_area (Linux's struct user_desc subset).
struct TlsSegment {
    uint32_t base = 0;
    uint32_t limit_pages = 0;
    bool present = false;
};

/// A thread's x87/MMX/SSE registers as FXSAVE stores them. FXSAVE needs a
/// 16-byte-aligned 512-byte area; threads are only 8-byte aligned, so the
/// area starts at the first 16-byte boundary in @c raw (arch/i386/fpu/fpu.h).
struct FpuSlot {
    uint8_t raw[512 + 16];
    bool used = false; ///< The thread has FPU state of its own (it used the FPU since exec).
};

/// The saved state of a thread that is not running.
struct ThreadContext {
    uint32_t esp = 0;           ///< Kernel stack pointer saved by context_switch.
    uint32_t kstack_top = 0;    ///< Where a trap from user mode starts its frame.
    TrapFrame* frame = nullptr; ///< The user trap frame at the top of the kernel stack.
    TlsSegment tls;
    FpuSlot fpu; ///< Saved FPU registers (src/arch/i386/fpu/).
};

/// System call number and arguments as the i386 Linux ABI passes them.
inline uint32_t syscall_number(const TrapFrame& f)
{
    return f.eax;
}

} // namespace toll::arch
