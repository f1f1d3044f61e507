# User-memory copies that survive page faults. A fault on one of the labelled
# instructions is redirected by fixup_user_access() (uaccess.cpp) to the
# routine's fault exit, which returns failure. Everything else about the
# fault (demand-zero pages) is handled first by the VM, so a fault here means
# the address really is bad.

    .text
# Errno i386_copy_user(void* to, const void* from, size_t length): 0, or the
# Errno the fixup left in %eax (the VM's reason for refusing the fault).
    .globl i386_copy_user
i386_copy_user:
    pushl %esi
    pushl %edi
    movl 12(%esp), %edi
    movl 16(%esp), %esi
    movl 20(%esp), %ecx
    movl %ecx, %edx
    shrl $2, %ecx
    andl $3, %edx
    cld
    .globl i386_copy_user_access_1
i386_copy_user_access_1:
    rep movsl
    movl %edx, %ecx
    .globl i386_copy_user_access_2
i386_copy_user_access_2:
    rep movsb
    xorl %eax, %eax
    popl %edi
    popl %esi
    ret
    .globl i386_copy_user_fault
i386_copy_user_fault:
    popl %edi
    popl %esi
    ret

# long i386_copy_string_user(char* to, const char* from, size_t size): the
# string's length, -2 if no NUL within size bytes, or -errno on a fault (the
# fixup leaves the Errno in %eax).
    .globl i386_copy_string_user
i386_copy_string_user:
    pushl %esi
    pushl %edi
    movl 12(%esp), %edi
    movl 16(%esp), %esi
    movl 20(%esp), %ecx
    xorl %eax, %eax
1:  cmpl %ecx, %eax
    je 3f
    .globl i386_copy_string_access
i386_copy_string_access:
    movb (%esi, %eax), %dl
    movb %dl, (%edi, %eax)
    testb %dl, %dl
    jz 2f
    incl %eax
    jmp 1b
2:  popl %edi
    popl %esi
    ret
3:  movl $-2, %eax
    popl %edi
    popl %esi
    ret
    .globl i386_copy_string_fault
i386_copy_string_fault:
    negl %eax
    popl %edi
    popl %esi
    ret
