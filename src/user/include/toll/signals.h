/* toll/signals.h: Linux's signal numbers, the si_code values Toll's kernel
 * sends and the sigaction and sigaltstack flags it honours, written once. The kernel includes this
 * file (src/kernel/kern/signal_abi.h) and uses these names itself. Programs take the same numbers
 * from musl's <signal.h>; src/user/tests/signal_abi_check.c asserts at compile time that every
 * value here equals musl's, so the two cannot drift apart. Plain C, so that both sides can read it.
 */
#ifndef TOLL_SIGNALS_H
#define TOLL_SIGNALS_H

/** Signal numbers (Linux, include/uapi/asm-generic/signal.h; the same on
 * i386 and arm64). */
enum {
    TOLL_SIGHUP = 1,
    TOLL_SIGINT = 2,
    TOLL_SIGQUIT = 3,
    TOLL_SIGILL = 4,
    TOLL_SIGTRAP = 5,
    TOLL_SIGABRT = 6,
    TOLL_SIGBUS = 7,
    TOLL_SIGFPE = 8,
    TOLL_SIGKILL = 9,
    TOLL_SIGUSR1 = 10,
    TOLL_SIGSEGV = 11,
    TOLL_SIGUSR2 = 12,
    TOLL_SIGPIPE = 13,
    TOLL_SIGALRM = 14,
    TOLL_SIGTERM = 15,
    TOLL_SIGSTKFLT = 16,
    TOLL_SIGCHLD = 17,
    TOLL_SIGCONT = 18,
    TOLL_SIGSTOP = 19,
    TOLL_SIGTSTP = 20,
    TOLL_SIGTTIN = 21,
    TOLL_SIGTTOU = 22,
    TOLL_SIGURG = 23,
    TOLL_SIGXCPU = 24,
    TOLL_SIGXFSZ = 25,
    TOLL_SIGVTALRM = 26,
    TOLL_SIGPROF = 27,
    TOLL_SIGWINCH = 28,
    TOLL_SIGIO = 29,
    TOLL_SIGPWR = 30,
    TOLL_SIGSYS = 31,
};

/** The si_code values the kernel puts in a siginfo_t (Linux,
 * include/uapi/asm-generic/siginfo.h). Each signal's codes count from 1. */
enum {
    TOLL_SI_USER = 0,      /**< kill */
    TOLL_SI_KERNEL = 0x80, /**< sent by the kernel itself */
    TOLL_SI_TKILL = -6,    /**< tkill, tgkill (and so raise) */
    TOLL_SEGV_MAPERR = 1,  /**< SIGSEGV: no mapping at the address */
    TOLL_SEGV_ACCERR = 2,  /**< SIGSEGV: a mapping without the right */
    TOLL_BUS_ADRALN = 1,   /**< SIGBUS: a misaligned access */
    TOLL_BUS_OBJERR = 3,   /**< SIGBUS: beyond the object's end */
    TOLL_ILL_ILLOPC = 1,   /**< SIGILL: an undefined instruction */
    TOLL_TRAP_BRKPT = 1,   /**< SIGTRAP: a breakpoint */
    TOLL_FPE_INTDIV = 1,   /**< SIGFPE: an integer divide by zero */
    TOLL_CLD_EXITED = 1,   /**< SIGCHLD: the child exited */
    TOLL_CLD_KILLED = 2,   /**< SIGCHLD: a signal ended the child */
    TOLL_CLD_STOPPED = 5,  /**< SIGCHLD: the child stopped */
    TOLL_CLD_CONTINUED = 6 /**< SIGCHLD: the child was continued */
};

/** sigaction's sa_flags the kernel honours (Linux,
 * include/uapi/asm-generic/signal-defs.h and asm/signal.h). Macros, not an
 * enum: SA_RESETHAND is bit 31, beyond an int. */
#define TOLL_SA_NOCLDSTOP 0x00000001u /**< no SIGCHLD when a child stops */
#define TOLL_SA_NOCLDWAIT 0x00000002u /**< children are reaped at once */
#define TOLL_SA_SIGINFO 0x00000004u   /**< the handler takes siginfo_t and a ucontext */
#define TOLL_SA_RESTORER 0x04000000u  /**< sa_restorer names the code that calls sigreturn */
#define TOLL_SA_ONSTACK 0x08000000u   /**< run on the alternate signal stack */
#define TOLL_SA_RESTART 0x10000000u   /**< restart an interrupted system call */
#define TOLL_SA_NODEFER 0x40000000u   /**< do not block the signal in its handler */
#define TOLL_SA_RESETHAND 0x80000000u /**< back to SIG_DFL once delivered */

/** sigaltstack's ss_flags (Linux, include/uapi/linux/signal.h). */
#define TOLL_SS_ONSTACK 1             /**< the thread runs on the stack now */
#define TOLL_SS_DISABLE 2             /**< there is no alternate stack */
#define TOLL_SS_AUTODISARM (1u << 31) /**< forget the stack while a handler runs on it */

#endif
