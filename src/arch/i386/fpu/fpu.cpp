// The FPU's owner and its switching: lazy (CR0.TS and #NM) or eager (FXSAVE
// and FXRSTOR on every switch), the boot configuration, and fork and exec.
#include "arch/i386/fpu/fpu.h"
#include "arch/i386/cpu.h"
#include "arch/i386/fpu/fpu_internal.h"
#include "arch/i386/layout.h"
#include "kernel/kern/console.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/param.h"
#include "kernel/proc/thread.h"
#include "lib/string.h"

namespace toll::i386::fpu {

TOLL_PARAM(g_param_switch, "fpu.switch", "lazy (CR0.TS + #NM, the default) or eager");
TOLL_PARAM(g_param_clean, "fpu.clean",
           "always (default), flag, patched, nops, idt or off: the FXSAVE-leak cleaning");
TOLL_PARAM(g_param_leak, "fpu.leak", "simulate: restore the x87 pointers as an AMD K7/K8 does");
TOLL_PARAM(g_param_bug, "fpu.bug", "0 or 1: override the CPU's FXSAVE-leak bug flag");
TOLL_PARAM(g_param_selftest, "fpu.selftest",
           "kernel_nm: execute an FPU instruction in the kernel at boot (it must panic)");

TOLL_COUNTER(g_dna_traps, "fpu.dna_traps");
TOLL_COUNTER(g_saves, "fpu.saves");
TOLL_COUNTER(g_restores, "fpu.restores");
TOLL_COUNTER(g_clean_calls, "fpu.clean_calls");

Config g_config;
PerCpuOwner g_owner;
uint32_t g_mxcsr_mask;

namespace {

// Intel SDM Vol. 2, CPUID: leaf 1 EDX bits; AMD APM Vol. 3, CPUID Fn8000_0008
// EBX bit 2 (XSaveErPtr: FXSAVE always saves the pointers, no leak).
constexpr uint32_t k_cpuid_fxsr = 1u << 24, k_cpuid_sse = 1u << 25;
constexpr uint32_t k_cpuid_xsave_err_ptr = 1u << 2;
constexpr uint32_t k_cpuid_ext_base = 0x80000000, k_cpuid_ext_sizes = 0x80000008;
constexpr unsigned k_family_extended = 0xF;
constexpr unsigned k_leak_min_family = 6; // Linux: AMD family 6 (K7) and later

struct Cpuid {
    uint32_t a, b, c, d;
};

Cpuid cpuid(uint32_t leaf)
{
    Cpuid r;
    asm volatile("cpuid" : "=a"(r.a), "=b"(r.b), "=c"(r.c), "=d"(r.d) : "a"(leaf), "c"(0));
    return r;
}

const char* const k_clean_names[] = {"always", "flag", "patched", "nops", "idt", "off"};

// Decides X86_BUG_FXSAVE_LEAK the way Linux does (arch/x86/kernel/cpu/amd.c):
// an AMD CPU of family 6 or later, unless it reports XSaveErPtr.
bool cpu_has_fxsave_leak(char* vendor_out, unsigned* family_out)
{
    Cpuid v = cpuid(0);
    char vendor[13];
    memcpy(vendor, &v.b, 4);
    memcpy(vendor + 4, &v.d, 4);
    memcpy(vendor + 8, &v.c, 4);
    vendor[12] = '\0';
    memcpy(vendor_out, vendor, sizeof vendor);
    Cpuid one = cpuid(1);
    unsigned family = (one.a >> 8) & 0xF;
    if (family == k_family_extended)
        family += (one.a >> 20) & 0xFF;
    *family_out = family;
    if (strcmp(vendor, "AuthenticAMD") != 0 || family < k_leak_min_family)
        return false;
    if (cpuid(k_cpuid_ext_base).a >= k_cpuid_ext_sizes &&
        (cpuid(k_cpuid_ext_sizes).b & k_cpuid_xsave_err_ptr))
        return false;
    return true;
}

void read_config(bool cpu_bug)
{
    static const char* const bug_names[] = {"0", "1"};
    static const char* const switch_names[] = {"lazy", "eager"};
    static const char* const leak_names[] = {"off", "simulate"};
    g_config.bug = param_get_choice("fpu.bug", bug_names, cpu_bug ? 1 : 0) == 1;
    g_config.mode =
        param_get_choice("fpu.switch", switch_names, 0) == 1 ? Switch::eager : Switch::lazy;
    g_config.clean = static_cast<Clean>(
        param_get_choice("fpu.clean", k_clean_names, static_cast<size_t>(Clean::always)));
    g_config.leak_simulate = param_get_choice("fpu.leak", leak_names, 0) == 1;
}

RestoreFn select_restore()
{
    switch (g_config.clean) {
    case Clean::always:
        return restore_always;
    case Clean::flag:
        return restore_flag;
    case Clean::patched:
    case Clean::nops:
        return restore_patched;
    case Clean::idt:
        // The gate choice is the lazy path's; an eager switch has no gate,
        // so the same boot-time choice picks the function it calls.
        return g_config.bug ? restore_always : restore_plain;
    case Clean::off:
        return restore_plain;
    }
    return restore_always;
}

} // namespace

RestoreFn g_restore = restore_always;

uint32_t mxcsr_mask()
{
    return g_mxcsr_mask;
}

const char* clean_name(Clean c)
{
    return k_clean_names[static_cast<unsigned>(c)];
}

void make_initial_image(uint8_t* image)
{
    memset(image, 0, k_fxsave_size);
    uint16_t fcw = k_fcw_initial;
    memcpy(image + k_fx_fcw, &fcw, sizeof fcw);
    uint32_t mxcsr = k_mxcsr_initial;
    memcpy(image + k_fx_mxcsr, &mxcsr, sizeof mxcsr);
    // The abridged tag word (byte 4) is 0: every register empty.
}

void set_ts()
{
    uint32_t cr0 = read_cr0();
    if (!(cr0 & CR0_TS))
        write_cr0(cr0 | CR0_TS);
}

void init()
{
    Cpuid one = cpuid(1);
    if (!(one.d & k_cpuid_fxsr) || !(one.d & k_cpuid_sse))
        panic("fpu: this CPU lacks FXSAVE or SSE (CPUID.1:EDX = 0x%x); Toll needs both", one.d);
    char vendor[13];
    unsigned family;
    bool cpu_bug = cpu_has_fxsave_leak(vendor, &family);
    read_config(cpu_bug);
    // Intel SDM Vol. 3, 9.2 and 2.5: MP makes WAIT honour TS, NE reports x87
    // errors as #MF, EM clear lets the FPU run; OSFXSR enables FXSAVE's SSE
    // part and SSE itself, OSXMMEXCPT delivers SSE exceptions as #XM.
    write_cr0((read_cr0() | CR0_MP | CR0_NE) & ~CR0_EM);
    write_cr4(read_cr4() | CR4_OSFXSR | CR4_OSXMMEXCPT);
    clts();
    asm volatile("fninit");
    // Intel SDM Vol. 1, 11.6.6: the MXCSR bits this CPU supports are the
    // MXCSR_MASK an FXSAVE stores; 0 there means the default 0xFFBF (no DAZ).
    constexpr uint32_t k_mxcsr_default_mask = 0xFFBF;
    alignas(k_fxsave_align) uint8_t probe[k_fxsave_size] = {};
    fxsave(probe);
    memcpy(&g_mxcsr_mask, probe + k_fx_mxcsr_mask, sizeof g_mxcsr_mask);
    if (g_mxcsr_mask == 0)
        g_mxcsr_mask = k_mxcsr_default_mask;
    g_restore = select_restore();
    unsigned patched = 0;
    if ((g_config.clean == Clean::patched || g_config.clean == Clean::nops) && !g_config.bug)
        patched = patch_cleaning(g_config.clean);
    install_trap_handlers();
    g_owner = nullptr;
    set_ts();
    kprintf("fpu: %s family %u, FXSAVE leak bug %s%s; fpu.switch=%s fpu.clean=%s%s%s\n", vendor,
            family, g_config.bug ? "yes" : "no", g_config.bug != cpu_bug ? " (fpu.bug=)" : "",
            g_config.mode == Switch::eager ? "eager" : "lazy", clean_name(g_config.clean),
            patched ? " (sequence patched out)" : "",
            g_config.leak_simulate ? " fpu.leak=simulate" : "");
    static const char* const selftest_names[] = {"off", "kernel_nm"};
    if (param_get_choice("fpu.selftest", selftest_names, 0) == 1) {
        kprintf("fpu: selftest: an FPU instruction in the kernel with CR0.TS set\n");
        asm volatile("fnop");
        panic("fpu: selftest: the kernel's FPU instruction did not trap");
    }
}

void switch_threads(arch::ThreadContext& from, arch::ThreadContext& to)
{
    if (g_owner == &from) {
        fxsave(area(from));
        g_saves.add();
        g_owner = nullptr;
    }
    if (g_config.mode == Switch::eager && to.fpu.used) {
        clts();
        g_restore(area(to));
        g_owner = &to;
        return;
    }
    set_ts();
}

void fork_copy(arch::ThreadContext& child)
{
    arch::ThreadContext& parent = proc::current()->context;
    child.fpu.used = parent.fpu.used;
    if (g_owner == &parent) {
        fxsave(area(child)); // the parent's live registers, straight into the child
        g_saves.add();
    } else if (parent.fpu.used) {
        memcpy(area(child), area(parent), k_fxsave_size);
    }
}

void exec_reset(arch::ThreadContext& ctx)
{
    if (g_owner == &ctx) {
        g_owner = nullptr;
        set_ts();
    }
    ctx.fpu.used = false;
}

const arch::ThreadContext* owner()
{
    return g_owner;
}

void release_owner()
{
    if (!g_owner)
        return;
    fxsave(area(*g_owner));
    g_saves.add();
    g_owner = nullptr;
    set_ts();
}

} // namespace toll::i386::fpu
