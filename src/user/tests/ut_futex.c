/* ut_futex: futex(2)'s answers, as Linux gives them: EAGAIN when the word
 * holds another value, EFAULT for a word that is not mapped, EINVAL for a
 * misaligned word, a bad timeout or an empty bitset, ETIMEDOUT after a
 * relative timeout (no sooner), ENOSYS for an operation it does not know,
 * EINTR when a handler interrupts a wait, and the counts FUTEX_WAKE,
 * FUTEX_REQUEUE and FUTEX_CMP_REQUEUE return with threads waiting. The
 * i386 build runs on an x86-64 Linux host too, and gives the same answers
 * there. */
#define _GNU_SOURCE
#include "toll/utest.h"
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

/* Linux, include/uapi/linux/futex.h. */
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_REQUEUE 3
#define FUTEX_CMP_REQUEUE 4
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAKE_BITSET 10
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256

/* The kernel's timespec for SYS_futex: two longs (on i386 not musl's
 * 64-bit time_t). */
struct ktimespec {
    long tv_sec;
    long tv_nsec;
};

static long futex(volatile int* uaddr, int op, int val, const void* timeout, volatile int* uaddr2,
                  int val3)
{
    return syscall(SYS_futex, uaddr, op, val, timeout, uaddr2, val3);
}

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

static volatile int g_word;

static void test_errors(void)
{
    g_word = 5;
    CHECK_ERR(futex(&g_word, FUTEX_WAIT, 6, NULL, NULL, 0), EAGAIN);
    CHECK_ERR(futex(&g_word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 6, NULL, NULL, 0), EAGAIN);
    CHECK_ERR(futex((volatile int*)((char*)&g_word + 1), FUTEX_WAIT, 5, NULL, NULL, 0), EINVAL);
    CHECK_ERR(futex(NULL, FUTEX_WAIT, 0, NULL, NULL, 0), EFAULT);
    volatile int* gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap((void*)gone, 4096);
    CHECK_ERR(futex(gone, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0), EFAULT);
    struct ktimespec bad = {0, 1000000000};
    CHECK_ERR(futex(&g_word, FUTEX_WAIT, 5, &bad, NULL, 0), EINVAL);
    struct ktimespec negative = {-1, 0};
    CHECK_ERR(futex(&g_word, FUTEX_WAIT, 5, &negative, NULL, 0), EINVAL);
    CHECK_ERR(futex(&g_word, FUTEX_WAIT_BITSET, 5, NULL, NULL, 0), EINVAL);
    CHECK_ERR(futex(&g_word, FUTEX_WAKE_BITSET, 1, NULL, NULL, 0), EINVAL);
    CHECK_ERR(futex(&g_word, 99, 0, NULL, NULL, 0), ENOSYS);
    CHECK_ERR(futex(&g_word, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1, NULL, NULL, 0), ENOSYS);
    CHECK_EQ(futex(&g_word, FUTEX_WAKE, 1, NULL, NULL, 0), 0);
    CHECK_EQ(futex(&g_word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 10, NULL, NULL, 0), 0);
    CHECK_ERR(futex(&g_word, FUTEX_CMP_REQUEUE, 1, (void*)1, &g_word, 6), EAGAIN);
    CHECK_ERR(futex(&g_word, FUTEX_CMP_REQUEUE, -1, (void*)1, &g_word, 5), EINVAL);
    CHECK_ERR(futex(&g_word, FUTEX_REQUEUE, 1, (void*)-1, &g_word, 0), EINVAL);
}

static void test_timeout(void)
{
    g_word = 1;
    struct ktimespec t = {0, 50 * 1000000};
    long start = now_ms();
    CHECK_ERR(futex(&g_word, FUTEX_WAIT, 1, &t, NULL, 0), ETIMEDOUT);
    long waited = now_ms() - start;
    CHECK_MSG(waited >= 40, "FUTEX_WAIT's 50 ms timeout ends it no sooner than the clock's 50 ms");
    utest_line("# FUTEX_WAIT with a 50 ms timeout returned after %ld ms", waited);
    struct ktimespec zero = {0, 0};
    CHECK_ERR(futex(&g_word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 1, &zero, NULL, 0), ETIMEDOUT);
    /* FUTEX_WAIT_BITSET's timeout is absolute: one in the past ends it at once. */
    struct timespec past;
    clock_gettime(CLOCK_MONOTONIC, &past);
    struct ktimespec abs = {(long)past.tv_sec, past.tv_nsec};
    CHECK_ERR(futex(&g_word, FUTEX_WAIT_BITSET, 1, &abs, NULL, -1), ETIMEDOUT);
}

/* --- waiters: counts, requeue, EINTR --- */

enum { k_waiters = 3 };
static volatile int g_a, g_b, g_arrived, g_released;
static volatile long g_results[k_waiters];

static void* wait_on_a(void* arg)
{
    int i = (int)(intptr_t)arg;
    __atomic_add_fetch(&g_arrived, 1, __ATOMIC_SEQ_CST);
    long r = futex(&g_a, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0);
    g_results[i] = r == 0 ? 0 : -errno;
    __atomic_add_fetch(&g_released, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* Lets every waiter reach its futex_wait: they run while the caller sleeps. */
static void settle(void)
{
    while (g_arrived < k_waiters)
        sched_yield();
    sleep_ms(50);
}

static void test_counts(void)
{
    pthread_t t[k_waiters];
    g_a = g_b = g_arrived = g_released = 0;
    for (int i = 0; i < k_waiters; ++i)
        pthread_create(&t[i], NULL, wait_on_a, (void*)(intptr_t)i);
    settle();
    CHECK_EQ(futex(&g_a, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0), 1);
    /* Of the two left: one woken, one moved to g_b (the count is both). */
    CHECK_EQ(futex(&g_a, FUTEX_CMP_REQUEUE | FUTEX_PRIVATE_FLAG, 1, (void*)1, &g_b, 0), 2);
    CHECK_EQ(futex(&g_a, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 10, NULL, NULL, 0), 0);
    CHECK_EQ(futex(&g_b, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 10, NULL, NULL, 0), 1);
    for (int i = 0; i < k_waiters; ++i)
        pthread_join(t[i], NULL);
    int woken = 0;
    for (int i = 0; i < k_waiters; ++i)
        woken += g_results[i] == 0;
    CHECK_MSG(woken == k_waiters, "every waiter returned 0 from its wake");

    /* FUTEX_REQUEUE without the compare; then a wake's bitset must meet the wait's. */
    g_arrived = 0;
    for (int i = 0; i < 2; ++i)
        pthread_create(&t[i], NULL, wait_on_a, (void*)(intptr_t)i);
    while (g_arrived < 2)
        sched_yield();
    sleep_ms(50);
    CHECK_EQ(futex(&g_a, FUTEX_REQUEUE | FUTEX_PRIVATE_FLAG, 0, (void*)2, &g_b, 0), 2);
    CHECK_EQ(futex(&g_b, FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG, 10, NULL, NULL, 0x2), 2);
    for (int i = 0; i < 2; ++i)
        pthread_join(t[i], NULL);
}

static void on_usr1(int sig)
{
    (void)sig;
}

static volatile pid_t g_waiter_tid;

static void* wait_to_be_interrupted(void* arg)
{
    (void)arg;
    g_waiter_tid = (pid_t)syscall(SYS_gettid);
    long r = futex(&g_a, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0);
    g_results[0] = r == 0 ? 0 : -errno;
    return NULL;
}

static void test_eintr(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1; /* no SA_RESTART: the wait answers EINTR */
    sigaction(SIGUSR1, &sa, NULL);
    g_a = 0;
    g_waiter_tid = 0;
    g_results[0] = 1;
    pthread_t t;
    pthread_create(&t, NULL, wait_to_be_interrupted, NULL);
    while (!g_waiter_tid)
        sched_yield();
    sleep_ms(50);
    syscall(SYS_tgkill, getpid(), g_waiter_tid, SIGUSR1);
    pthread_join(t, NULL);
    CHECK_MSG(g_results[0] == -EINTR, "a handler interrupts FUTEX_WAIT with EINTR");
    signal(SIGUSR1, SIG_DFL);
}

int main(void)
{
    test_errors();
    test_timeout();
    test_counts();
    test_eintr();
    return utest_done();
}
