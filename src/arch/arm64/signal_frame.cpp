// Signal frames on arm64, in Linux's layout (arch/arm64/kernel/signal.c and
// uapi/asm/sigcontext.h): siginfo, then a ucontext whose sigcontext holds
// the registers and, in its reserved area, the FP/SIMD record; a frame
// record {fp, lr} above it. musl's __restore_rt (rt_sigreturn) undoes it.
#include "arch/arm64/fpu.h"
#include "arch/arm64/switch.h"
#include "kernel/arch/signal.h"
#include "kernel/proc/process.h"
#include "kernel/proc/signal.h"
#include "kernel/sys/uaccess.h"
#include "lib/string.h"

namespace toll::arch {
namespace {

/// struct sigcontext without its 4 KB reserved area (which follows it,
/// 16-byte aligned, and holds the records).
struct SigContext {
    uint64_t fault_address;
    uint64_t regs[31];
    uint64_t sp, pc, pstate;
};
constexpr size_t k_reserved_size = 4096;
constexpr size_t k_sigcontext_size = (sizeof(SigContext) + 15) / 16 * 16 + k_reserved_size;

struct StackT {
    uint64_t ss_sp;
    int32_t ss_flags;
    uint64_t ss_size;
};

/// struct ucontext up to uc_mcontext (asm-generic/ucontext.h): the mask is
/// padded to 1024 bits and the sigcontext is 16-byte aligned.
struct UContextHead {
    uint64_t uc_flags;
    uint64_t uc_link;
    StackT uc_stack;
    uint64_t uc_sigmask;
    uint8_t unused[1024 / 8 - sizeof(uint64_t)];
};
constexpr size_t k_mcontext_offset = (sizeof(UContextHead) + 15) / 16 * 16;

// Offsets in struct rt_sigframe {siginfo_t info; struct ucontext uc;}.
constexpr size_t k_uc_offset = k_siginfo_size;
constexpr size_t k_sc_offset = k_uc_offset + k_mcontext_offset;
constexpr size_t k_reserved_offset = k_sc_offset + (sizeof(SigContext) + 15) / 16 * 16;
constexpr size_t k_frame_size = k_sc_offset + k_sigcontext_size;
static_assert(k_mcontext_offset == 176);

/// struct fpsimd_context, the first record in the reserved area.
struct FpsimdRecord {
    uint32_t magic, size;
    uint32_t fpsr, fpcr;
    uint64_t vregs[64];
};
constexpr uint32_t k_fpsimd_magic = 0x46508001;
static_assert(sizeof(FpsimdRecord) == 528);

/// struct frame_record, which x29 points at: the handler's caller's fp and lr.
struct FrameRecord {
    uint64_t fp, lr;
};

// Arm ARM, SPSR_EL1: a return to EL0t keeps only N, Z, C and V from the
// program; M[3:0] = 0 (EL0t) and DAIF clear are forced, so no frame can
// return to EL1 or run user code with interrupts masked.
constexpr uint64_t k_pstate_user = 0xF0000000;
// Arm ARM, SPSR_EL1: M[3:0] and M[4] (the mode: EL0t, AArch64) and the
// D, A, I, F masks. A frame with any of them set cannot be resumed by a
// program: Linux's valid_native_regs refuses it (SIGSEGV) rather than mend it.
constexpr uint64_t k_pstate_mode = 0x1F, k_pstate_daif = 0x3C0;
// Arm ARM, FPSR and FPCR: the defined bits (flags, cumulative exceptions;
// AHP, DN, FZ, RMode, FZ16, trap enables, FIZ/AH/NEP).
constexpr uint32_t k_fpsr_bits = 0xF800009F, k_fpcr_bits = 0x07FF9F07;
constexpr uint64_t k_stack_align = 16;

} // namespace

bool signal_frame_push(TrapFrame& f, ThreadContext& ctx, const SignalDelivery& d)
{
    // Below the interrupted stack, or at the top of the alternate one (which
    // Linux's arm64 does not check the frame fits on).
    uint64_t sp = d.stack_top;
    uint64_t record = (sp - sizeof(FrameRecord)) & ~(k_stack_align - 1);
    uint64_t frame = (record - k_frame_size) & ~(k_stack_align - 1);
    if (record > sp || frame > record)
        return false;
    FrameRecord fr{f.x[29], f.x[30]};
    uint8_t info[k_siginfo_size];
    proc::siginfo_write(info, d);
    UContextHead uc{};
    uc.uc_stack.ss_sp = d.altstack.sp;
    uc.uc_stack.ss_flags = d.altstack.flags;
    uc.uc_stack.ss_size = d.altstack.size;
    uc.uc_sigmask = d.saved_mask;
    SigContext sc{};
    memcpy(sc.regs, f.x, sizeof sc.regs);
    sc.sp = f.sp_el0;
    sc.pc = f.elr;
    sc.pstate = f.spsr;
    sc.fault_address = d.info.addr;
    FpState fp = arm64::fpu::read(ctx);
    FpsimdRecord rec{k_fpsimd_magic,
                     sizeof(FpsimdRecord),
                     static_cast<uint32_t>(fp.fpsr),
                     static_cast<uint32_t>(fp.fpcr),
                     {}};
    memcpy(rec.vregs, fp.q, sizeof rec.vregs);
    const uint64_t end_marker[2] = {0, 0};
    if (sys::copyout(record, &fr, sizeof fr) != k_ok ||
        sys::copyout(frame, info, sizeof info) != k_ok ||
        sys::copyout(frame + k_uc_offset, &uc, sizeof uc) != k_ok ||
        sys::copyout(frame + k_sc_offset, &sc, sizeof sc) != k_ok ||
        sys::copyout(frame + k_reserved_offset, &rec, sizeof rec) != k_ok ||
        sys::copyout(frame + k_reserved_offset + sizeof rec, end_marker, sizeof end_marker) != k_ok)
        return false;
    f.x[0] = static_cast<uint64_t>(d.signo);
    f.x[1] = frame;
    f.x[2] = frame + k_uc_offset;
    f.x[29] = record;
    // Without SA_RESTORER (glibc), the handler returns into exec's page.
    f.x[30] = d.action.restorer ? d.action.restorer : proc::signal_trampoline_address();
    f.sp_el0 = frame;
    f.elr = d.action.handler;
    f.spsr &= k_pstate_user;
    return true;
}

size_t signal_trampoline(const uint8_t** code)
{
    // Arm ARM C6.2: MOVZ X8, #139 (rt_sigreturn's number); SVC #0.
    static const uint32_t k_code[] = {0xd2800000u | (139u << 5) | 8u, 0xd4000001u};
    *code = reinterpret_cast<const uint8_t*>(k_code);
    return sizeof k_code;
}

bool signal_frame_pop(TrapFrame& f, ThreadContext& ctx, bool rt, uint64_t* mask)
{
    if (!rt)
        return false; // arm64 has rt_sigreturn only
    uint64_t frame = f.sp_el0;
    if (frame & (k_stack_align - 1))
        return false; // Linux's check too: the handler must leave sp as it found it
    SigContext sc;
    FpsimdRecord rec;
    if (sys::copyin(mask, frame + k_uc_offset + offsetof(UContextHead, uc_sigmask), sizeof *mask) !=
            k_ok ||
        sys::copyin(&sc, frame + k_sc_offset, sizeof sc) != k_ok ||
        sys::copyin(&rec, frame + k_reserved_offset, sizeof rec) != k_ok)
        return false;
    if (rec.magic != k_fpsimd_magic || rec.size != sizeof(FpsimdRecord))
        return false;
    if (sc.pstate & (k_pstate_mode | k_pstate_daif))
        return false;
    memcpy(f.x, sc.regs, sizeof f.x);
    f.sp_el0 = sc.sp;
    f.elr = sc.pc;
    f.spsr = sc.pstate & k_pstate_user;
    FpState fp;
    memcpy(fp.q, rec.vregs, sizeof fp.q);
    fp.fpsr = rec.fpsr & k_fpsr_bits;
    fp.fpcr = rec.fpcr & k_fpcr_bits;
    arm64::fpu::write(ctx, fp);
    return true;
}

void syscall_restart(TrapFrame& f, uintptr_t saved)
{
    constexpr uint64_t k_svc_length = 4;
    f.elr -= k_svc_length;
    f.x[0] = saved;
}

bool user_frame_vet(TrapFrame&, ThreadContext&)
{
    // Nothing to vet: arm64 has no segment state, and rt_sigreturn keeps
    // only the PSTATE bits a program may hold (signal_frame_pop).
    return true;
}

size_t min_signal_stack()
{
    // Linux, arch/arm64/include/uapi/asm/signal.h: MINSIGSTKSZ.
    constexpr size_t k_minsigstksz = 5120;
    return k_minsigstksz;
}

long syscall_return_value(const TrapFrame& f)
{
    return static_cast<long>(f.x[0]);
}

} // namespace toll::arch
