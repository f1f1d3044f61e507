// The arm64 kernel's first instructions. QEMU's virt machine enters here
// with the MMU off, at EL1 (or at EL2 with virtualization=on). We drop to
// EL1 if needed, install the exception vectors, zero .bss, take the boot
// stack and call arm64_boot(x0) in C++.

#include "arch/arm64/layout.h"

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
    // Leave EL2 for EL1: AArch64 at EL1, EL1 may use the counters, no
    // virtual counter offset, EL1 starts with the MMU off.
    mov     x9, #HCR_EL2_RW
    msr     hcr_el2, x9
    mov     x9, #CNTHCTL_EL2_EL1_ACCESS
    msr     cnthctl_el2, x9
    msr     cntvoff_el2, xzr
    ldr     x9, =SCTLR_EL1_MMU_OFF
    msr     sctlr_el1, x9
    mov     x9, #SPSR_EL1H_DAIF_MASKED
    msr     spsr_el2, x9
    adr     x9, at_el1
    msr     elr_el2, x9
    eret

at_el1:
    ldr     x9, =arm64_exception_vectors
    msr     vbar_el1, x9
    isb

    // Zero .bss with 8-byte stores (the linker script aligns both ends).
    ldr     x9, =__bss_start
    ldr     x10, =__bss_end
2:  cmp     x9, x10
    b.hs    3f
    str     xzr, [x9], #8
    b       2b

3:  ldr     x9, =boot_stack_top
    mov     sp, x9
    mov     x29, xzr                 // the end of the frame-pointer chain
    mov     x30, xzr
    mov     x0, x19
    bl      arm64_boot
4:  wfe
    b       4b

    .bss
    .balign 16
    .globl boot_stack_bottom
boot_stack_bottom:
    .skip   BOOT_STACK_SIZE
    .globl boot_stack_top
boot_stack_top:
