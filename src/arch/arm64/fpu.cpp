// Lazy and eager switching of the FP/SIMD registers on arm64 (fpu.h). The
// registers belong to at most one thread, the owner, which is always the
// running thread or nobody: a switch saves the owner's registers (it is
// leaving the CPU) and, unless the next thread is restored eagerly, turns
// EL0's access off, so the next thread's first FP/SIMD instruction traps and
// brings its own registers back.
#include "arch/arm64/fpu.h"
#include "arch/arm64/switch.h"
#include "arch/arm64/trap.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/param.h"
#include "kernel/proc/thread.h"
#include "lib/string.h"

namespace toll::arm64::fpu {
namespace {

TOLL_PARAM(g_param_switch, "fpu.switch", "lazy (CPACR_EL1.FPEN trap, the default) or eager");
// The same events as i386's: a first FP instruction after a switch traps
// (there #NM, "device not available"; here EC 0x07), registers saved, restored.
TOLL_COUNTER(g_traps, "fpu.dna_traps");
TOLL_COUNTER(g_saves, "fpu.saves");
TOLL_COUNTER(g_restores, "fpu.restores");

// Arm ARM D13.2.30, CPACR_EL1.FPEN [21:20]: 0b01 traps FP/SIMD at EL0 only
// (the kernel's save and restore code at EL1 still runs); 0b11 traps nothing.
constexpr uint64_t k_fpen_mask = 3u << 20, k_fpen_el0_traps = 1u << 20, k_fpen_open = 3u << 20;
// ESR_EL1.EC 0x07: an FP/SIMD access trapped by CPACR_EL1.FPEN.
constexpr unsigned k_ec_fp_access = 0x07;

// Each CPU's registers hold at most one thread's state: an owner per CPU.
arch::ThreadContext* g_owners[k_max_cpus];

arch::ThreadContext*& owner_slot()
{
    return g_owners[this_cpu().id];
}
bool g_eager;

void set_fpen(uint64_t fpen)
{
    uint64_t cpacr;
    asm volatile("mrs %0, cpacr_el1" : "=r"(cpacr));
    cpacr = (cpacr & ~k_fpen_mask) | fpen;
    asm volatile("msr cpacr_el1, %0; isb" ::"r"(cpacr) : "memory");
}

// Loads @p ctx's registers and gives it the FP/SIMD unit.
void take(arch::ThreadContext& ctx)
{
    set_fpen(k_fpen_open);
    arm64_fp_restore(&ctx.fp);
    g_restores.add();
    ctx.fp.used = true;
    owner_slot() = &ctx;
}

// Saves the owner's registers (if any) and closes EL0's access.
void release()
{
    if (owner_slot()) {
        arm64_fp_save(&owner_slot()->fp);
        g_saves.add();
        owner_slot() = nullptr;
    }
    set_fpen(k_fpen_el0_traps);
}

// EC 0x07 from EL0: the running thread's first FP/SIMD instruction since it
// last lost the registers. Restore them; eret retries the instruction.
bool fp_access_trap(arch::TrapFrame& f)
{
    if (!f.from_user())
        return false; // the kernel never uses FP/SIMD: a kernel bug
    g_traps.add();
    release(); // nobody should own them here, but never lose a state
    take(proc::current()->context);
    return true;
}

} // namespace

void init()
{
    static const char* const names[] = {"lazy", "eager"};
    g_eager = param_get_choice("fpu.switch", names, 0) == 1;
    set_sync_hook(k_ec_fp_access, fp_access_trap);
    owner_slot() = nullptr;
    set_fpen(k_fpen_el0_traps);
}

void switch_threads(arch::ThreadContext& from, arch::ThreadContext& to)
{
    (void)from; // the owner, if any, is the thread leaving the CPU
    release();
    if (g_eager && to.fp.used)
        take(to);
}

void fork_copy(arch::ThreadContext& parent, arch::ThreadContext& child)
{
    if (owner_slot() == &parent)
        arm64_fp_save(&child.fp);
    else
        child.fp = parent.fp;
    child.fp.used = parent.fp.used;
}

void exec_reset(arch::ThreadContext& ctx)
{
    if (owner_slot() == &ctx) {
        owner_slot() = nullptr;
        set_fpen(k_fpen_el0_traps);
    }
    ctx.fp = arch::FpState{};
}

arch::FpState read(arch::ThreadContext& ctx)
{
    if (owner_slot() == &ctx)
        arm64_fp_save(&ctx.fp);
    return ctx.fp;
}

void write(arch::ThreadContext& ctx, const arch::FpState& state)
{
    if (owner_slot() == &ctx) {
        owner_slot() = nullptr;
        set_fpen(k_fpen_el0_traps);
    }
    ctx.fp = state;
    ctx.fp.used = true;
}

const arch::ThreadContext* owner()
{
    return owner_slot();
}

bool eager()
{
    return g_eager;
}

} // namespace toll::arm64::fpu
