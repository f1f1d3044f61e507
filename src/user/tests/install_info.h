/* install_info.h: the signal tests' one way to install an SA_SIGINFO
 * handler (ut_signal, ut_linux). */
#ifndef INSTALL_INFO_H
#define INSTALL_INFO_H
#include <signal.h>
#include <stddef.h>

/* Installs @p fn as the SA_SIGINFO handler of @p sig, with sa_flags
 * @p flags added and nothing blocked. */
static inline void install_info(int sig, void (*fn)(int, siginfo_t*, void*), int flags)
{
    struct sigaction sa = {0};
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

#endif
