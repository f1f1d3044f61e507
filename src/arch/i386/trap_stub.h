/* The per-vector entry stub shared by the kernel's IDT (trap_entry.S) and the
   vm86 monitor's (vm86/vm86_entry.S): push a dummy error code where the CPU
   pushes none, then the vector, and go to the common path. Included by
   assembly only. */
#pragma once
/* Assembler macros, not C++: */
/* clang-format off */

/* Vectors for which the CPU pushes an error code: 8, 10-14, 17, 21, 29, 30
   (Intel SDM Vol. 3, 6.13). */
.macro trap_stub vector, common
    .balign 16
    .if (\vector == 8) || (\vector >= 10 && \vector <= 14) || (\vector == 17) || (\vector == 21) || (\vector == 29) || (\vector == 30)
    .else
    pushl $0
    .endif
    pushl $\vector
    jmp \common
.endm

/* Emits the 256 stubs, 16 bytes apart, for the common path \common. */
.macro trap_stub_table common
    .altmacro
    .set trap_stub_vector, 0
    .rept 256
    trap_stub %trap_stub_vector, \common
    .set trap_stub_vector, trap_stub_vector + 1
    .endr
    .noaltmacro
.endm
