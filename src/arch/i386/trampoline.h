// The trampoline slot shared by the kernel's and every user page directory:
// its variables, stack and copy buffer (trap_entry.S), and the address-space
// layout selected at boot with vm.split=.
#pragma once
#include "arch/i386/layout.h"
#include <stdint.h>

namespace toll::i386 {

/// What the entry and exit code reads (offsets TV_* in layout.h).
struct TrampolineVars {
    uint32_t layout;     ///< LAYOUT_3_1, LAYOUT_3_1_PTI or LAYOUT_4_4
    uint32_t kernel_cr3; ///< loaded on entry from user mode (isolated layouts)
    uint32_t user_cr3;   ///< loaded on exit to user mode (isolated layouts)
    uint32_t kstack_top; ///< where the entry code moves the trap frame
    uint32_t saved_esp;  ///< the kernel stack pointer during a fast copy
};
static_assert(__builtin_offsetof(TrampolineVars, kernel_cr3) == TV_KERNEL_CR3);
static_assert(__builtin_offsetof(TrampolineVars, user_cr3) == TV_USER_CR3);
static_assert(__builtin_offsetof(TrampolineVars, kstack_top) == TV_KSTACK_TOP);
static_assert(__builtin_offsetof(TrampolineVars, saved_esp) == TV_SAVED_ESP);

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

extern "C" toll::i386::TrampolineVars trampoline_vars;
extern "C" char trampoline_stack_top[];
extern "C" char trampoline_copy_buffer[];
extern "C" char __trampoline_start[], __trampoline_end[], __trampoline_phys[];
