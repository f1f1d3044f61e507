# memset and memcpy for the i386 kernel: the string instructions, a 32-bit
# word per repetition (rep stosl, rep movsl), then the last 0-3 bytes. QEMU's
# deterministic mode counts each repetition as an instruction, so a page
# costs 1024 instead of the two or three per word of src/lib/string.cpp's C
# loop, whose definitions are weak in the kernel for these to replace.
# Every entry into the kernel clears the direction flag (trap_entry.S), as
# the System V ABI requires at a call.

    .text
# void* memset(void* dst, int value, size_t n)
    .globl memset
    .type memset, @function
memset:
    pushl %ebp                  # a frame, for backtraces and the profiler's calls
    movl %esp, %ebp
    pushl %edi
    movl 8(%ebp), %edi
    movzbl 12(%ebp), %eax
    movl 16(%ebp), %edx
    imull $0x01010101, %eax     # the byte in all four bytes of the word
    movl %edx, %ecx
    shrl $2, %ecx
    rep stosl
    movl %edx, %ecx
    andl $3, %ecx
    rep stosb
    movl 8(%ebp), %eax
    popl %edi
    popl %ebp
    ret
    .size memset, . - memset

# void* memcpy(void* dst, const void* src, size_t n)
    .globl memcpy
    .type memcpy, @function
memcpy:
    pushl %ebp
    movl %esp, %ebp
    pushl %esi
    pushl %edi
    movl 8(%ebp), %edi
    movl 12(%ebp), %esi
    movl 16(%ebp), %edx
    movl %edx, %ecx
    shrl $2, %ecx
    rep movsl
    movl %edx, %ecx
    andl $3, %ecx
    rep movsb
    movl 8(%ebp), %eax
    popl %edi
    popl %esi
    popl %ebp
    ret
    .size memcpy, . - memcpy
