// The arm64 kernel's first instructions. QEMU's virt machine enters here
// with the MMU off, at EL1 (or at EL2 with virtualization=on), at the
// physical address of _start although the kernel is linked in the upper half
// (linker.ld). We drop to EL1 if needed, zero .bss and take the boot stack
// using only PC-relative addresses (adrp), let arm64_mmu_boot build the
// kernel's tables and turn the MMU on, jump to the upper half, install the
// exception vectors and call arm64_boot(x0) in C++.

#include "arch/arm64/layout.h"

// Leaves EL2 for EL1 at \target: AArch64 at EL1, EL1 may use the counters,
// no virtual counter offset, EL1 starts with the MMU off and with every
// interrupt masked. The boot CPU and every CPU PSCI starts take this road.
.macro leave_el2 target
    mov     x9, #HCR_EL2_RW
    msr     hcr_el2, x9
    mov     x9, #CNTHCTL_EL2_EL1_ACCESS
    msr     cnthctl_el2, x9
    msr     cntvoff_el2, xzr
    ldr     x9, =SCTLR_EL1_MMU_OFF
    msr     sctlr_el1, x9
    mov     x9, #SPSR_EL1H_DAIF_MASKED
    msr     spsr_el2, x9
    adr     x9, \target
    msr     elr_el2, x9
    eret
.endm

    .section .boot.text, "ax"
    .globl _start
_start:
    mov     x19, x0                  // whatever the loader left in x0
    msr     daifset, #0xf            // no interrupts until the kernel wants them

    // Arm ARM, CurrentEL: the exception level is in bits [3:2].
    mrs     x9, CurrentEL
    lsr     x9, x9, #2
    cmp     x9, #2
    b.eq    from_el2
    cmp     x9, #1
    b.eq    at_el1
    // EL3: a firmware's level; Toll does not run there. Park this CPU.
1:  wfe
    b       1b

from_el2:
    leave_el2 at_el1

at_el1:
    // Zero .bss with 8-byte stores (the linker script aligns both ends).
    // adrp and add are PC-relative: with the MMU off they give physical
    // addresses, where ldr =symbol would give the upper-half link address.
    adrp    x9, __bss_start
    add     x9, x9, :lo12:__bss_start
    adrp    x10, __bss_end
    add     x10, x10, :lo12:__bss_end
2:  cmp     x9, x10
    b.hs    3f
    str     xzr, [x9], #8
    b       2b

3:  adrp    x9, boot_stack_top
    add     x9, x9, :lo12:boot_stack_top
    mov     sp, x9
    mov     x29, xzr                 // the end of the frame-pointer chain
    mov     x30, xzr
    bl      arm64_mmu_boot           // MMU on; TTBR0 still maps us where we are
    ldr     x9, =upper_half          // the link address: KERNEL_VA_BASE + ...
    br      x9
upper_half:
    ldr     x9, =arm64_exception_vectors
    msr     vbar_el1, x9
    isb
    ldr     x9, =boot_stack_top
    mov     sp, x9
    mov     x29, xzr
    mov     x30, xzr
    mov     x0, x19
    bl      arm64_boot
4:  wfe
    b       4b

// Another CPU, started by PSCI CPU_ON (smp.cpp) at the physical address of
// this label with the MMU off and x0 = the physical address of its
// SecondaryStart: take the boot CPU's translation regime, turn the MMU on
// (TTBR0 maps us where we are, as on the boot CPU), jump to the upper half,
// take the CPU's own stack and per-CPU pointer and call
// arm64_secondary_main(cpu). Nothing is written before the MMU is on.
    .globl arm64_secondary_entry
arm64_secondary_entry:
    msr     daifset, #0xf
    mov     x19, x0
    mrs     x9, CurrentEL
    lsr     x9, x9, #2
    cmp     x9, #2
    b.ne    5f
    leave_el2 5f
5:  ldr     x9, [x19, #SS_MAIR]
    msr     mair_el1, x9
    ldr     x9, [x19, #SS_TCR]
    msr     tcr_el1, x9
    ldr     x9, [x19, #SS_TTBR]
    msr     ttbr0_el1, x9
    msr     ttbr1_el1, x9
    isb
    tlbi    vmalle1
    dsb     nsh
    isb
    ldr     x9, [x19, #SS_SCTLR]
    msr     sctlr_el1, x9
    isb
    ldr     x9, =secondary_upper_half
    br      x9
secondary_upper_half:
    ldr     x9, =arm64_exception_vectors
    msr     vbar_el1, x9
    isb
    // x19 still works through TTBR0's identity map until the C++ leaves it.
    ldr     x9, [x19, #SS_STACK]
    mov     sp, x9
    ldr     x0, [x19, #SS_CPU]
    msr     tpidr_el1, x0
    mov     x29, xzr
    mov     x30, xzr
    bl      arm64_secondary_main
6:  wfe
    b       6b

    .bss
    .balign 16
    .globl boot_stack_bottom
boot_stack_bottom:
    .skip   BOOT_STACK_SIZE
    .globl boot_stack_top
boot_stack_top:
