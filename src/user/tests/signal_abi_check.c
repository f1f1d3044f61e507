/* signal_abi_check.c: the kernel's signal numbers and si_codes
 * (toll/signals.h, which the kernel includes) against musl's <signal.h>,
 * which programs use. Nothing here runs: a value that drifts from musl's
 * fails the build of ut_signal. */
#define _GNU_SOURCE
#include "toll/signals.h"
#include <signal.h>

#define SAME(name) _Static_assert(TOLL_##name == name, #name " differs between Toll and musl")

SAME(SIGHUP);
SAME(SIGINT);
SAME(SIGQUIT);
SAME(SIGILL);
SAME(SIGTRAP);
SAME(SIGABRT);
SAME(SIGBUS);
SAME(SIGFPE);
SAME(SIGKILL);
SAME(SIGUSR1);
SAME(SIGSEGV);
SAME(SIGUSR2);
SAME(SIGPIPE);
SAME(SIGALRM);
SAME(SIGTERM);
SAME(SIGSTKFLT);
SAME(SIGCHLD);
SAME(SIGCONT);
SAME(SIGSTOP);
SAME(SIGTSTP);
SAME(SIGTTIN);
SAME(SIGTTOU);
SAME(SIGURG);
SAME(SIGXCPU);
SAME(SIGXFSZ);
SAME(SIGVTALRM);
SAME(SIGPROF);
SAME(SIGWINCH);
SAME(SIGIO);
SAME(SIGPWR);
SAME(SIGSYS);

SAME(SI_USER);
SAME(SI_KERNEL);
SAME(SI_TKILL);
SAME(SEGV_MAPERR);
SAME(SEGV_ACCERR);
SAME(BUS_ADRALN);
SAME(BUS_OBJERR);
SAME(ILL_ILLOPC);
SAME(TRAP_BRKPT);
SAME(FPE_INTDIV);
SAME(CLD_EXITED);
SAME(CLD_KILLED);
SAME(CLD_STOPPED);
SAME(CLD_CONTINUED);
