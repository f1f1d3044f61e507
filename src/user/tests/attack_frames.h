/* The children of ut_attack that forge user-frame state (attack_frames.c):
 * each is run by run_child() in a fresh process and ends it, by its exit
 * status or by the signal the kernel sends; ut_attack.c's attack_i386() and
 * attack_arm64() say which outcome each must have. */
#ifndef TOLL_ATTACK_FRAMES_H
#define TOLL_ATTACK_FRAMES_H

#if defined(__i386__)
void tls_refusals(void);
void tls_exact_limit(void);
void tls_pulled_from_under_ss(void);
void tls_pulled_from_under_ds(void);
void null_data_segments_at_syscall(void);
void forged_bad_data_segments(void);
void forged_iopl(void);
void forged_kernel_cs(void);
void forged_kernel_ss(void);
void forged_mxcsr(void);
void forged_kernel_fpstate(void);
void iret_to_vm86(void);
#elif defined(__aarch64__)
void forged_el1(void);
void forged_no_fpsimd(void);
#endif

#endif
