// The trampoline slot shared by the kernel's and every user page directory:
// its variables, stack and copy buffer (trap_entry.S), and the address-space
// layout selected at boot with vm.split=.
#pragma once
#include "arch/i386/layout.h"
#include <stdint.h>

namespace toll::i386 {

/// One CPU's part of the trampoline (offsets TV_* and TC_* in layout.h):
/// what its entry and exit code reads, its trampoline stack and its copy
/// buffer. Every CPU's block is mapped in every address space (supervisor
/// only), as Linux's cpu_entry_area is; a CPU reaches its own through its
/// stack pointer on entry and through the CPU record's ``port_word`` in the kernel, so no
/// CPU's trap or fast copy can land in another's block.
struct TrampolineCpu {
    uint32_t kernel_cr3;              ///< loaded on entry from user mode (isolated layouts)
    uint32_t user_cr3;                ///< loaded on exit to user mode (isolated layouts)
    uint32_t kstack_top;              ///< where the entry code moves the trap frame
    uint32_t saved_esp;               ///< the kernel stack pointer during a fast copy
    uint8_t stack[TC_STACK_TOP - 16]; ///< the trampoline stack, up to TC_STACK_TOP
    uint8_t copy_buffer[TRAMPOLINE_COPY_BUFFER]; ///< the 4/4 fast copy's kernel side
};
static_assert(__builtin_offsetof(TrampolineCpu, kernel_cr3) == TV_KERNEL_CR3);
static_assert(__builtin_offsetof(TrampolineCpu, user_cr3) == TV_USER_CR3);
static_assert(__builtin_offsetof(TrampolineCpu, kstack_top) == TV_KSTACK_TOP);
static_assert(__builtin_offsetof(TrampolineCpu, saved_esp) == TV_SAVED_ESP);
static_assert(__builtin_offsetof(TrampolineCpu, copy_buffer) == TC_STACK_TOP);
static_assert(sizeof(TrampolineCpu) == TRAMPOLINE_CPU_SIZE);

/// Places a definition in the trampoline's data (mapped in every space).
#define TOLL_TRAMPOLINE_DATA __attribute__((section(".trampoline.data")))

/// The address-space layouts of vm.split=.
enum class Layout : uint32_t {
    split_3_1 = LAYOUT_3_1,
    split_3_1_pti = LAYOUT_3_1_PTI,
    split_4_4 = LAYOUT_4_4,
};

} // namespace toll::i386

/// The layout this boot runs, chosen once by layout_init before the first
/// pmap (kernel data; the trampoline keeps a copy for the entry code).
extern "C" uint32_t i386_layout;

namespace toll::i386 {

/// The layout this boot runs.
inline Layout layout()
{
    return static_cast<Layout>(i386_layout);
}

/// True for 3/1-pti and 4/4: user mode runs on a page directory without the kernel.
inline bool layout_isolated()
{
    return layout() != Layout::split_3_1;
}

/// Chooses the layout from the command line (vm.split=); called by i386_boot.
void layout_init();

/// The layout's name as vm.split= spells it.
const char* layout_name();

} // namespace toll::i386

/// Every CPU's block, by Cpu::id (trap_entry.S).
extern "C" toll::i386::TrampolineCpu trampoline_cpus[TRAMPOLINE_CPUS];
/// The layout again, in the trampoline, for the entry code (i386_layout's copy).
extern "C" uint32_t trampoline_layout;
extern "C" char __trampoline_start[], __trampoline_end[], __trampoline_phys[];

namespace toll::i386 {

/// The trampoline block of the CPU numbered @p cpu_id.
inline TrampolineCpu& trampoline_of(unsigned cpu_id)
{
    return trampoline_cpus[cpu_id];
}

/// The top of that CPU's trampoline stack (its TSS.esp0 under the isolated layouts).
inline uint32_t trampoline_stack_top(unsigned cpu_id)
{
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&trampoline_cpus[cpu_id])) +
           TC_STACK_TOP;
}

} // namespace toll::i386
