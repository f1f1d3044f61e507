// User-memory copies that survive faults. A data abort on one of the
// labelled loads or stores is sent by uaccess.cpp first to the VM (a
// demand-zero page makes the instruction worth retrying) and otherwise to
// the routine's fault exit, which returns failure: the fixup leaves the
// VM's reason, an Errno, in x0. The copies go byte by
// byte: simple, and a post-indexed access that faults writes nothing back,
// so a retry resumes exactly where it stopped.

    .text
    .balign 4
    // Errno arm64_copy_user(void* to, const void* from, size_t length): 0,
    // or the Errno the fixup left in x0.
    .globl arm64_copy_user
arm64_copy_user:
    cbz     x2, 2f
1:
    .globl arm64_copy_user_load
arm64_copy_user_load:
    ldrb    w3, [x1], #1
    .globl arm64_copy_user_store
arm64_copy_user_store:
    strb    w3, [x0], #1
    subs    x2, x2, #1
    b.ne    1b
2:  mov     x0, #0
    .globl arm64_copy_user_fault
arm64_copy_user_fault:
    ret

    // long arm64_copy_string_user(char* to, const char* from, size_t size):
    // the string's length, -2 if no NUL within size bytes, -errno on a fault
    // (the fixup leaves the Errno in x0).
    .globl arm64_copy_string_user
arm64_copy_string_user:
    mov     x4, #0
1:  cmp     x4, x2
    b.eq    3f
    .globl arm64_copy_string_access
arm64_copy_string_access:
    ldrb    w3, [x1, x4]
    strb    w3, [x0, x4]
    cbz     w3, 2f
    add     x4, x4, #1
    b       1b
2:  mov     x0, x4
    ret
3:  mov     x0, #-2
    ret
    .globl arm64_copy_string_fault
arm64_copy_string_fault:
    neg     x0, x0
    ret
