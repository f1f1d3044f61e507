/* ut_threads: musl's threads on Toll's clone and futex: pthread_create and
 * pthread_join, mutexes, condition variables and barriers under
 * contention, getpid and gettid in each thread, the exit of one thread
 * against exit_group, the clear-child-tid word and its futex wake, tgkill
 * to one thread and a process-directed signal taken by the thread that
 * does not block it, a faulting thread that kills its whole process, and
 * execve from a process with several threads. The i386 build runs on an
 * x86-64 Linux host too, and gives the same answers there. */
#define _GNU_SOURCE
#include "toll/utest.h"
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#ifndef FUTEX_WAIT
#define FUTEX_WAIT 0 /* include/uapi/linux/futex.h */
#endif

enum { k_threads = 4, k_rounds = 2000 };

static pid_t gettid_(void)
{
    return (pid_t)syscall(SYS_gettid);
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

/* Waits for @p pid: its exit code, 1000 + the signal that killed it, or -1. */
static int outcome(pid_t pid)
{
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFSIGNALED(status) ? 1000 + WTERMSIG(status) : WEXITSTATUS(status);
}

/* --- create and join; the ids --- */

struct ids {
    pid_t pid, tid;
};

static void* report_ids(void* arg)
{
    struct ids* out = arg;
    out->pid = getpid();
    out->tid = gettid_();
    return (void*)(intptr_t)(out->tid ^ 0x5A5A);
}

static void test_create_join(void)
{
    pthread_t t[k_threads];
    struct ids ids[k_threads];
    int created = 0, joined = 0, same_pid = 0, own_tid = 0;
    for (int i = 0; i < k_threads; ++i)
        created += pthread_create(&t[i], NULL, report_ids, &ids[i]) == 0;
    for (int i = 0; i < k_threads; ++i) {
        void* result;
        if (pthread_join(t[i], &result) == 0 && (intptr_t)result == (ids[i].tid ^ 0x5A5A))
            ++joined;
        same_pid += ids[i].pid == getpid();
        own_tid += ids[i].tid != getpid() && ids[i].tid > 0;
        for (int j = 0; j < i; ++j)
            own_tid -= ids[j].tid == ids[i].tid;
    }
    CHECK_EQ(created, k_threads);
    CHECK_MSG(joined == k_threads, "pthread_join returns each thread's result");
    CHECK_MSG(same_pid == k_threads, "getpid in every thread is the process's id");
    CHECK_MSG(own_tid == k_threads, "each thread has a thread id of its own");
    CHECK_MSG(gettid_() == getpid(), "the first thread's id is the pid");
    CHECK_EQ(syscall(SYS_set_tid_address, NULL), gettid_());
}

/* --- a mutex under contention --- */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static long g_counter;

static void* add_rounds(void* arg)
{
    (void)arg;
    for (int i = 0; i < k_rounds; ++i) {
        pthread_mutex_lock(&g_lock);
        long v = g_counter;
        if (i % 64 == 0)
            sched_yield(); /* give the CPU away with the lock held */
        g_counter = v + 1;
        pthread_mutex_unlock(&g_lock);
    }
    return NULL;
}

static void test_mutex(void)
{
    pthread_t t[k_threads];
    g_counter = 0;
    for (int i = 0; i < k_threads; ++i)
        pthread_create(&t[i], NULL, add_rounds, NULL);
    for (int i = 0; i < k_threads; ++i)
        pthread_join(t[i], NULL);
    CHECK_MSG(g_counter == (long)k_threads * k_rounds, "no increment under the mutex is lost");
}

/* --- a condition variable: a bounded queue, one producer, consumers --- */

enum { k_slots = 4, k_items = 400 };
static pthread_mutex_t g_qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t g_not_full = PTHREAD_COND_INITIALIZER;
static int g_queue[k_slots], g_head, g_count, g_done;
static long g_sum;

static void* consume(void* arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&g_qlock);
        while (g_count == 0 && !g_done)
            pthread_cond_wait(&g_not_empty, &g_qlock);
        if (g_count == 0) {
            pthread_mutex_unlock(&g_qlock);
            return NULL;
        }
        int v = g_queue[g_head];
        g_head = (g_head + 1) % k_slots;
        --g_count;
        g_sum += v;
        pthread_cond_signal(&g_not_full);
        pthread_mutex_unlock(&g_qlock);
    }
}

static void test_condvar(void)
{
    pthread_t t[k_threads - 1];
    g_sum = g_head = g_count = g_done = 0;
    for (int i = 0; i < k_threads - 1; ++i)
        pthread_create(&t[i], NULL, consume, NULL);
    for (int v = 1; v <= k_items; ++v) {
        pthread_mutex_lock(&g_qlock);
        while (g_count == k_slots)
            pthread_cond_wait(&g_not_full, &g_qlock);
        g_queue[(g_head + g_count) % k_slots] = v;
        ++g_count;
        pthread_cond_signal(&g_not_empty);
        pthread_mutex_unlock(&g_qlock);
    }
    pthread_mutex_lock(&g_qlock);
    g_done = 1;
    pthread_cond_broadcast(&g_not_empty);
    pthread_mutex_unlock(&g_qlock);
    for (int i = 0; i < k_threads - 1; ++i)
        pthread_join(t[i], NULL);
    CHECK_MSG(g_sum == (long)k_items * (k_items + 1) / 2,
              "every item passed through the queue exactly once");
}

/* --- a barrier: no thread enters a phase before all left the last --- */

enum { k_phases = 50 };
static pthread_barrier_t g_barrier;
static int g_phase_of[k_threads];
static int g_barrier_errors;

static void* run_phases(void* arg)
{
    int me = (int)(intptr_t)arg;
    for (int phase = 0; phase < k_phases; ++phase) {
        g_phase_of[me] = phase;
        pthread_barrier_wait(&g_barrier);
        for (int i = 0; i < k_threads; ++i)
            if (g_phase_of[i] < phase)
                __atomic_add_fetch(&g_barrier_errors, 1, __ATOMIC_RELAXED);
        pthread_barrier_wait(&g_barrier);
    }
    return NULL;
}

static void test_barrier(void)
{
    pthread_t t[k_threads];
    g_barrier_errors = 0;
    pthread_barrier_init(&g_barrier, NULL, k_threads);
    for (int i = 0; i < k_threads; ++i)
        pthread_create(&t[i], NULL, run_phases, (void*)(intptr_t)i);
    for (int i = 0; i < k_threads; ++i)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&g_barrier);
    CHECK_MSG(g_barrier_errors == 0, "a barrier holds every thread until all arrive");
}

/* --- exit of one thread against exit_group --- */

/* Run as "ut_threads outlive" (exec'd, so that musl's start-up has set the
 * first thread's clear-child-tid word, which pthread_exit needs: a forked
 * child's has none): the first thread leaves with pthread_exit, the other
 * ends the process 50 ms later with status 42. */
static void* outlive_main(void* arg)
{
    (void)arg;
    sleep_ms(50);
    _exit(42);
}

static int outlive(void)
{
    pthread_t t;
    pthread_create(&t, NULL, outlive_main, NULL);
    pthread_exit(NULL); /* only this thread */
}

static void* end_everything(void* arg)
{
    (void)arg;
    sleep_ms(20);
    _exit(9); /* exit_group: the main thread, in pause, goes too */
}

static void test_exit_vs_exit_group(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        char* const argv[] = {"ut_threads", "outlive", NULL};
        execve(utest_bin("ut_threads"), argv, NULL);
        _exit(127);
    }
    CHECK_MSG(outcome(pid) == 42, "a thread runs on after the first thread's pthread_exit");

    pid = fork();
    if (pid == 0) {
        pthread_t t;
        pthread_create(&t, NULL, end_everything, NULL);
        for (;;)
            pause();
    }
    CHECK_MSG(outcome(pid) == 9, "exit_group in one thread ends the process with its status");

    /* The raw exit of the first thread while another lives: the process's
     * status is the last thread's. */
    pid = fork();
    if (pid == 0) {
        pthread_t t;
        pthread_create(&t, NULL, end_everything, NULL);
        syscall(SYS_exit, 3);
    }
    CHECK_MSG(outcome(pid) == 9, "after the first thread's exit, the last one's exit_group counts");
}

/* --- clear-child-tid: the word is zeroed and its futex woken at exit --- */

static volatile int g_tid_word;

static void* set_word_and_exit(void* arg)
{
    (void)arg;
    g_tid_word = gettid_();
    syscall(SYS_set_tid_address, &g_tid_word);
    sleep_ms(20);
    syscall(SYS_exit, 0); /* past musl: the kernel alone clears the word */
    return NULL;
}

static void test_clear_child_tid(void)
{
    g_tid_word = -1;
    pthread_t t;
    pthread_create(&t, NULL, set_word_and_exit, NULL);
    while (g_tid_word == -1)
        sched_yield();
    int woken = 0;
    for (int tries = 0; tries < 100 && g_tid_word != 0; ++tries) {
        int v = g_tid_word;
        struct timespec limit = {1, 0};
        if (v != 0 && syscall(SYS_futex, &g_tid_word, FUTEX_WAIT, v, &limit, NULL, 0) == 0)
            woken = 1;
    }
    CHECK_MSG(g_tid_word == 0, "the exiting thread's clear-child-tid word is zeroed");
    CHECK_MSG(woken, "and a futex waiter on it is woken");
}

/* --- signals to one thread --- */

static volatile pid_t g_handled_by;
static volatile int g_go;

static void record_tid(int sig)
{
    (void)sig;
    g_handled_by = gettid_();
}

static volatile pid_t g_worker_tid;

/* Waits until a handler has run (g_handled_by), for up to two seconds. The
 * worker may run on another CPU, which takes the signal at its next return
 * to user mode; a count of yields bounds nothing there (a CPU with nothing
 * else to run returns from sched_yield at once, and under QEMU's
 * deterministic mode the other vCPU may not run at all meanwhile), so the
 * wait is by the clock, a millisecond's sleep at a time. */
static void wait_for_handler(void)
{
    struct timespec start, now, pause = {0, 1000000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        if (g_handled_by)
            return;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= 2)
            return;
        nanosleep(&pause, NULL);
    }
}

static void* wait_for_signal(void* arg)
{
    (void)arg;
    g_worker_tid = gettid_();
    while (!g_go)
        sched_yield();
    return NULL;
}

static void test_thread_signals(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = record_tid;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    g_go = 0;
    g_worker_tid = 0;
    pthread_t t;
    pthread_create(&t, NULL, wait_for_signal, NULL);
    while (!g_worker_tid)
        sched_yield();

    g_handled_by = 0;
    CHECK_EQ(syscall(SYS_tgkill, getpid(), g_worker_tid, SIGUSR1), 0);
    wait_for_handler();
    CHECK_MSG(g_handled_by == g_worker_tid, "tgkill's signal runs in the thread it names");

    /* The first thread blocks SIGUSR2: a kill of the process finds the other. */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    g_handled_by = 0;
    kill(getpid(), SIGUSR2);
    wait_for_handler();
    CHECK_MSG(g_handled_by == g_worker_tid,
              "a process-directed signal goes to a thread that does not block it");
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    CHECK_MSG(sigismember(&now, SIGUSR2), "the mask is the calling thread's own");
    pthread_sigmask(SIG_SETMASK, &old, NULL);

    CHECK_ERR(syscall(SYS_tgkill, getpid() + 100000, g_worker_tid, 0), ESRCH);
    CHECK_ERR(syscall(SYS_tgkill, getpid(), 0, SIGUSR1), EINVAL);
    g_go = 1;
    pthread_join(t, NULL);
    CHECK_ERR(syscall(SYS_tgkill, getpid(), g_worker_tid, 0), ESRCH);
    signal(SIGUSR1, SIG_DFL);
    signal(SIGUSR2, SIG_DFL);
}

/* --- a fault in one thread ends the process; exec ends the others --- */

static void* fault(void* arg)
{
    (void)arg;
    sleep_ms(10);
    *(volatile int*)0 = 1;
    return NULL;
}

static void* spin(void* arg)
{
    (void)arg;
    for (;;)
        sched_yield();
    return NULL;
}

static void* exec_true(void* arg)
{
    (void)arg;
    char* const argv[] = {"true", NULL};
    execve(utest_bin("true"), argv, NULL);
    _exit(127);
}

static void test_fault_and_exec(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        pthread_t t;
        pthread_create(&t, NULL, fault, NULL);
        for (;;)
            pause();
    }
    CHECK_MSG(outcome(pid) == 1000 + SIGSEGV, "a faulting thread kills its whole process");

    pid = fork();
    if (pid == 0) {
        pthread_t t[2];
        pthread_create(&t[0], NULL, spin, NULL);
        pthread_create(&t[1], NULL, spin, NULL);
        sleep_ms(10);
        char* const argv[] = {"false", NULL};
        execve(utest_bin("false"), argv, NULL);
        _exit(127);
    }
    CHECK_MSG(outcome(pid) == 1, "execve from a process with three threads runs the program");

    /* exec from a thread other than the first: the first one goes. */
    pid = fork();
    if (pid == 0) {
        pthread_t t;
        pthread_create(&t, NULL, exec_true, NULL);
        for (;;)
            pause();
    }
    CHECK_MSG(outcome(pid) == 0, "execve from a second thread ends the first and runs the program");
}

int main(int argc, char** argv)
{
    if (argc > 1 && strcmp(argv[1], "outlive") == 0)
        return outlive();
    test_create_join();
    test_mutex();
    test_condvar();
    test_barrier();
    test_exit_vs_exit_group();
    test_clear_child_tid();
    test_thread_signals();
    test_fault_and_exec();
    return utest_done();
}
