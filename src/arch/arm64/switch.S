// Switching kernel stacks: the heart of a context switch. What a C++ caller
// expects to survive a call (AAPCS64: x19-x29, the frame pointer, and the
// link register x30) is pushed on the old stack, the stack pointer is saved,
// and the new thread's registers are popped from its stack.

// A switch frame, 96 bytes from low to high: x19, x20, ..., x28, x29, x30.
    .text
    .balign 4
    // void arm64_switch_stacks(uint64_t* save_sp, uint64_t new_sp)
    .globl arm64_switch_stacks
arm64_switch_stacks:
    sub     sp, sp, #96
    stp     x19, x20, [sp, #0]
    stp     x21, x22, [sp, #16]
    stp     x23, x24, [sp, #32]
    stp     x25, x26, [sp, #48]
    stp     x27, x28, [sp, #64]
    stp     x29, x30, [sp, #80]
    mov     x9, sp
    str     x9, [x0]
    mov     sp, x1
    ldp     x19, x20, [sp, #0]
    ldp     x21, x22, [sp, #16]
    ldp     x23, x24, [sp, #32]
    ldp     x25, x26, [sp, #48]
    ldp     x27, x28, [sp, #64]
    ldp     x29, x30, [sp, #80]
    add     sp, sp, #96
    ret

    // The first "return" of a new kernel thread: the switch frame left the
    // entry function in x19 and its argument in x20; x21 holds what to call
    // if the entry function returns.
    .globl arm64_kernel_thread_start
arm64_kernel_thread_start:
    mov     x0, x20
    blr     x19
    blr     x21
1:  wfe
    b       1b
