/* ut_linux.h: what the two files of the program ut_linux (ut_linux.c and
 * linux_signals.c) share. */
#ifndef UT_LINUX_H
#define UT_LINUX_H
#include <sys/types.h>

/* A wait outcome: a child killed by signal @p sig. */
#define KILLED_BY(sig) (1000 + (sig))

/* Waits for @p pid: its exit code, or KILLED_BY(signal). */
int outcome(pid_t pid);

/* Installs handler @p fn for @p sig with sa_flags @p flags, nothing blocked. */
void install(int sig, void (*fn)(int), int flags);

/* The checks of linux_signals.c, which main runs in turn. */
void test_si_code(void);
void test_sigaltstack(void);
void test_bad_sigreturn(void);

/* The alternate stack after fork (kept) or exec (gone): exit 0 when it is
 * as @p expect_kept says (the exec'd ut_linux --altstack-gone runs it). */
int altstack_is(int expect_kept);

#endif
