# Switching kernel stacks on i386: the heart of a context switch
# (context.cpp decides what to switch; this saves and restores what a C++
# caller expects to survive a call, cdecl's ebp, ebx, esi and edi), and the
# first instructions of a new kernel thread.

# context_switch_stacks(uint32_t* save_esp, uint32_t new_esp): saves the
# callee-saved registers on the current kernel stack, stores its pointer,
# and resumes the thread whose stack is new_esp.
    .text
    .globl context_switch_stacks
context_switch_stacks:
    movl 4(%esp), %eax
    movl 8(%esp), %edx
    pushl %ebp
    pushl %ebx
    pushl %esi
    pushl %edi
    movl %esp, (%eax)
    movl %edx, %esp
    popl %edi
    popl %esi
    popl %ebx
    popl %ebp
    ret

# First instructions of a new kernel thread: context_init_kernel leaves the
# entry function in %ebx and its argument in %esi. The scheduler finishes
# the switch that brought us here first (sched_switch_tail, callee-saved
# registers untouched).
    .globl kernel_thread_start
kernel_thread_start:
    call sched_switch_tail
    pushl %esi
    call *%ebx
    call kernel_thread_exit_from_entry
1:  hlt
    jmp 1b

# First instructions of a new user thread (fork, spawn): finish the switch,
# then leave through the trap exit with the frame right above us.
    .globl new_user_thread_start
new_user_thread_start:
    call sched_switch_tail
    jmp trap_return
