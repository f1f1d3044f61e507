/* ut_fuzz: no program can make the kernel panic. Children make thousands of
 * system calls with random numbers and random arguments: good and bad
 * pointers (NULL, kernel addresses, unmapped pages, buffers that cross into
 * them, the top of memory), small and huge numbers. A child may get errors,
 * may die of its own faults (it can unmap its own stack), may block; the
 * parent ends any that are still running and then checks that the system
 * still forks and execs. A broken kernel panics, hangs or loses the parent.
 * The random sequence is fixed, so a failure replays exactly. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "toll/utest.h"

enum { k_children = 12, k_calls = 3000 };

static uint32_t g_state;

static uint32_t next_random(void)
{
    /* xorshift32: small, and the same on every run */
    g_state ^= g_state << 13;
    g_state ^= g_state >> 17;
    g_state ^= g_state << 5;
    return g_state;
}

static char g_buffer[8192];

static long random_argument(void)
{
    switch (next_random() % 12) {
    case 0: return 0;
    case 1: return -1;
    case 2: return (long)(next_random() % 64);           /* descriptors, small counts */
    case 3: return (long)(next_random() % 5000);
    case 4: return (long)(uintptr_t)(g_buffer + next_random() % sizeof g_buffer);
    case 5: return (long)(uintptr_t)(g_buffer + sizeof g_buffer - 8); /* near its end */
    case 6: return (long)0xC0100000u;                    /* kernel text under 3/1 */
    case 7: return (long)0xFFFFF000u;                    /* the very top */
    case 8: return (long)0x10000000u;                    /* nothing mapped there */
    case 9: return (long)(0xBFFFF000u + next_random() % 4096);
    case 10: return (long)(next_random() & ~0xFFFu);      /* a random page */
    default: return (long)next_random();
    }
}

/* Calls that would reach outside the child: fork (a bomb), kill (the parent),
 * and the reserved numbers of clone-like calls. */
static int allowed(long number)
{
    return number != SYS_fork && number != SYS_kill && number != SYS_clone &&
           number != SYS_vfork && number != SYS_exit_group && number != SYS_exit;
}

/* Most calls go to numbers the kernel implements (Linux's i386 numbers, as
 * in src/arch/i386/syscall_table.cpp), the rest anywhere. */
static const short k_known[] = {3,   4,   5,   6,   7,   11,  19,  20,  24,  33,  41,  42,
                                45,  54,  55,  63,  64,  91,  114, 125, 140, 145, 146, 158,
                                162, 174, 175, 192, 199, 221, 224, 243, 258, 265, 330, 331};

static void child(uint32_t seed)
{
    g_state = seed;
    close(0); /* a read of the console would wait for a person */
    for (int i = 0; i < k_calls; ++i) {
        uint32_t pick = next_random() % 10;
        long number = pick < 7   ? k_known[next_random() % (sizeof k_known / sizeof k_known[0])]
                      : pick < 9 ? (long)(next_random() % 400)
                                 : (long)(1000 + next_random() % 4);
        if (!allowed(number))
            continue;
        syscall(number, random_argument(), random_argument(), random_argument(),
                random_argument(), random_argument(), random_argument());
    }
    _exit(0);
}

int main(void)
{
    int exited = 0, killed_by_fault = 0, stopped = 0;
    for (int c = 0; c < k_children; ++c) {
        pid_t pid = fork();
        if (pid == 0)
            child(0x9E3779B9u * (uint32_t)(c + 1));
        CHECK(pid > 0);
        if (pid < 0)
            break;
        /* Give it a moment; then end it if it is still running or blocked. */
        struct timespec wait = {0, 200 * 1000 * 1000};
        int status = 0;
        pid_t done = 0;
        for (int tries = 0; tries < 5 && done == 0; ++tries) {
            done = waitpid(pid, &status, WNOHANG);
            if (done == 0)
                nanosleep(&wait, NULL);
        }
        if (done == 0) {
            kill(pid, SIGKILL);
            done = waitpid(pid, &status, 0);
            ++stopped;
        } else if (WIFSIGNALED(status)) {
            ++killed_by_fault;
        } else {
            ++exited;
        }
        CHECK_EQ(done, pid);
    }
    NOTE("children: %d finished their calls, %d died of their own faults, %d were stopped",
         exited, killed_by_fault, stopped);
    /* The system is healthy: a fresh program still starts and exits 0. */
    pid_t pid = fork();
    if (pid == 0) {
        execl(utest_bin("true"), "true", (char*)0);
        _exit(127);
    }
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork and exec still work");
    return utest_done();
}
