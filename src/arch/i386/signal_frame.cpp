// Signal frames on i386, in Linux's layout (arch/x86/include/asm/sigframe.h
// and uapi/asm/sigcontext.h), so that a musl program's handlers, and its
// restorers (__restore: sigreturn, __restore_rt: rt_sigreturn), run unchanged.
// A handler without SA_SIGINFO gets the old frame, one with it the rt frame.
#include "arch/i386/cpu.h"
#include "arch/i386/fpu/fpu.h"
#include "arch/i386/trap.h"
#include "kernel/arch/signal.h"
#include "kernel/proc/signal.h"
#include "kernel/sys/uaccess.h"
#include "lib/string.h"

namespace toll::arch {
namespace {

/// struct sigcontext (32-bit): the registers in the order the kernel's
/// trap frame keeps them, then the FPU state pointer, the old mask and CR2.
struct SigContext {
    uint32_t gs, fs, es, ds;
    uint32_t edi, esi, ebp, esp, ebx, edx, ecx, eax;
    uint32_t trapno, err, eip, cs, eflags, esp_at_signal, ss;
    uint32_t fpstate; ///< user address of the FPU state, 0 if none
    uint32_t oldmask; ///< the low 32 bits of the saved mask
    uint32_t cr2;
};
static_assert(sizeof(SigContext) == 88);

/// struct _fpstate_32: the FSAVE-format environment (112 bytes), which Toll
/// leaves zero but for the status word, then the FXSAVE image. magic 0
/// says the FXSAVE part is there.
struct [[gnu::packed]] FpState {
    uint32_t cw, sw, tag, ipoff, cssel, dataoff, datasel;
    uint8_t st[80];
    uint16_t status, magic;
    uint8_t fxsave[512];
};
static_assert(sizeof(FpState) == 624);
constexpr size_t k_fxsave_offset = 112;
constexpr uint32_t k_fpstate_align = 64; // as XSAVE would need
// Intel SDM Vol. 1, 10.5.1: FXSAVE keeps MXCSR at byte 24.
constexpr size_t k_mxcsr_offset = 24;

struct StackT {
    uint32_t ss_sp;
    int32_t ss_flags;
    uint32_t ss_size;
};

struct UContext {
    uint32_t uc_flags;
    uint32_t uc_link;
    StackT uc_stack;
    SigContext uc_mcontext;
    uint32_t uc_sigmask[2];
};
static_assert(sizeof(UContext) == 116);

/// The frame for a handler without SA_SIGINFO (struct sigframe).
struct OldFrame {
    uint32_t pretcode; ///< the restorer: the handler's return address
    int32_t sig;
    SigContext sc;
    FpState fpstate_unused; ///< kept for the offset of extramask
    uint32_t extramask;     ///< the high 32 bits of the saved mask
    uint8_t retcode[8];
};

/// The frame for an SA_SIGINFO handler (struct rt_sigframe).
struct RtFrame {
    uint32_t pretcode;
    int32_t sig;
    uint32_t pinfo; ///< the handler's second argument: &info
    uint32_t puc;   ///< its third: &uc
    uint8_t info[k_siginfo_size];
    UContext uc;
    uint8_t retcode[8];
};

// Linux's FIX_EFLAGS: the flags sigreturn takes from the frame (CF, PF, AF,
// ZF, SF, TF, DF, OF, RF, AC). Intel SDM Vol. 1, 3.4.3.
constexpr uint32_t k_user_eflags =
    0x1 | 0x4 | 0x10 | 0x40 | 0x80 | 0x100 | 0x400 | 0x800 | 0x10000 | 0x40000;
constexpr uint32_t k_eflags_tf = 0x100, k_eflags_df = 0x400, k_eflags_rf = 0x10000;

SigContext context_of(const TrapFrame& f, uint32_t fpstate, uint32_t oldmask)
{
    return SigContext{f.gs,      f.fs,       f.es,    f.ds,  f.edi,    f.esi,
                      f.ebp,     f.user_esp, f.ebx,   f.edx, f.ecx,    f.eax,
                      f.vector,  f.error,    f.eip,   f.cs,  f.eflags, f.user_esp,
                      f.user_ss, fpstate,    oldmask, 0};
}

void restore_context(TrapFrame& f, const SigContext& sc)
{
    f.gs = sc.gs & 0xFFFF;
    f.fs = sc.fs & 0xFFFF;
    f.es = sc.es & 0xFFFF;
    f.ds = sc.ds & 0xFFFF;
    f.edi = sc.edi;
    f.esi = sc.esi;
    f.ebp = sc.ebp;
    f.ebx = sc.ebx;
    f.edx = sc.edx;
    f.ecx = sc.ecx;
    f.eax = sc.eax;
    f.eip = sc.eip;
    f.user_esp = sc.esp;
    // CS and SS as the program wrote them, RPL forced to 3 as Linux does;
    // user_frame_check vets them (and DS-GS) before the frame is resumed.
    f.cs = (sc.cs & 0xFFFF) | 3;
    f.user_ss = (sc.ss & 0xFFFF) | 3;
    f.eflags = (f.eflags & ~k_user_eflags) | (sc.eflags & k_user_eflags);
}

} // namespace

bool signal_frame_push(TrapFrame& f, ThreadContext& ctx, const SignalDelivery& d)
{
    bool rt = d.action.flags & TOLL_SA_SIGINFO;
    // FPU state first, just below the interrupted stack (or at the top of
    // the alternate one), then the frame, placed so that the handler starts
    // as if called: esp + 4 16-aligned.
    uint32_t sp = static_cast<uint32_t>(d.stack_top);
    uint8_t fx[512];
    bool have_fpu = i386::fpu::signal_save(ctx, fx);
    uint32_t fpstate = 0;
    if (have_fpu) {
        fpstate = (sp - sizeof(FpState)) & ~(k_fpstate_align - 1);
        FpState head{};
        memcpy(&head.status, fx + 2, sizeof head.status); // FSW
        head.sw = head.status;
        memcpy(head.fxsave, fx, sizeof fx);
        if (fpstate > sp || sys::copyout(fpstate, &head, sizeof head) != k_ok)
            return false;
        sp = fpstate;
    }
    uint32_t frame_size = rt ? sizeof(RtFrame) : sizeof(OldFrame);
    uint32_t frame = ((sp - frame_size + 4) & ~uint32_t(15)) - 4;
    if (frame > sp)
        return false;
    // A frame for the alternate stack must fit on it (Linux's get_sigframe).
    const AltStack& alt = d.altstack;
    if (d.on_altstack && !(frame > alt.sp && frame - alt.sp <= alt.size))
        return false;
    uint32_t mask_low = static_cast<uint32_t>(d.saved_mask),
             mask_high = static_cast<uint32_t>(d.saved_mask >> 32);
    if (rt) {
        RtFrame r{};
        r.pretcode = d.action.restorer;
        r.sig = d.signo;
        r.pinfo = frame + offsetof(RtFrame, info);
        r.puc = frame + offsetof(RtFrame, uc);
        proc::siginfo_write(r.info, d);
        r.uc.uc_stack =
            StackT{static_cast<uint32_t>(alt.sp), alt.flags, static_cast<uint32_t>(alt.size)};
        r.uc.uc_mcontext = context_of(f, fpstate, mask_low);
        r.uc.uc_sigmask[0] = mask_low;
        r.uc.uc_sigmask[1] = mask_high;
        if (sys::copyout(frame, &r, sizeof r) != k_ok)
            return false;
        f.edx = r.pinfo; // Linux also passes them in registers (regparm)
        f.ecx = r.puc;
    } else {
        OldFrame o{};
        o.pretcode = d.action.restorer;
        o.sig = d.signo;
        o.sc = context_of(f, fpstate, mask_low);
        o.extramask = mask_high;
        if (sys::copyout(frame, &o, sizeof o) != k_ok)
            return false;
        f.edx = f.ecx = 0;
    }
    f.eax = static_cast<uint32_t>(d.signo);
    f.eip = d.action.handler;
    f.user_esp = frame;
    f.cs = i386::k_user_cs;
    f.ds = f.es = f.user_ss = i386::k_user_ds;
    f.eflags &= ~(k_eflags_tf | k_eflags_df | k_eflags_rf);
    return true;
}

bool signal_frame_pop(TrapFrame& f, ThreadContext& ctx, bool rt, uint64_t* mask)
{
    // The handler's ret popped pretcode; __restore also popped sig.
    SigContext sc;
    if (rt) {
        uint32_t frame = f.user_esp - 4;
        UContext uc;
        if (sys::copyin(&uc, frame + offsetof(RtFrame, uc), sizeof uc) != k_ok)
            return false;
        sc = uc.uc_mcontext;
        *mask = uint64_t(uc.uc_sigmask[1]) << 32 | uc.uc_sigmask[0];
    } else {
        uint32_t frame = f.user_esp - 8;
        uint32_t extramask;
        if (sys::copyin(&sc, frame + offsetof(OldFrame, sc), sizeof sc) != k_ok ||
            sys::copyin(&extramask, frame + offsetof(OldFrame, extramask), sizeof extramask) !=
                k_ok)
            return false;
        *mask = uint64_t(extramask) << 32 | sc.oldmask;
    }
    uint8_t fx[512];
    if (sc.fpstate) {
        if (sys::copyin(fx, sc.fpstate + k_fxsave_offset, sizeof fx) != k_ok)
            return false;
        // A bit the CPU does not support (bits 16-31 are reserved; DAZ is
        // not on every CPU) would make FXRSTOR fault: a bad frame, SIGSEGV,
        // as Linux answers.
        uint32_t mxcsr;
        memcpy(&mxcsr, fx + k_mxcsr_offset, sizeof mxcsr);
        if (mxcsr & ~i386::fpu::mxcsr_mask())
            return false;
    }
    restore_context(f, sc);
    i386::fpu::signal_restore(ctx, sc.fpstate ? fx : nullptr);
    return true;
}

void syscall_restart(TrapFrame& f, uintptr_t saved)
{
    constexpr uint32_t k_int_0x80_length = 2; // CD 80
    f.eip -= k_int_0x80_length;
    f.eax = static_cast<uint32_t>(saved);
}

bool user_frame_vet(TrapFrame& f, ThreadContext& ctx)
{
    return i386::user_frame_check(f, ctx.tls);
}

size_t min_signal_stack()
{
    // Linux, arch/x86/include/uapi/asm/signal.h: MINSIGSTKSZ.
    constexpr size_t k_minsigstksz = 2048;
    return k_minsigstksz;
}

long syscall_return_value(const TrapFrame& f)
{
    return static_cast<int32_t>(f.eax);
}

} // namespace toll::arch
