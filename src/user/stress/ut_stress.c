/* ut_stress: the kernel's subsystems at once, from several processes. N
 * workers (one per online CPU unless workers=N) each run, for iters=N rounds,
 * fork+exec of /bin/true, fork+exit+wait, mmap/mprotect/munmap with touched
 * pages, a pipe to a child, a signal to itself through a handler, a
 * SIGKILL to a child blocked in pause() and a thread (clone) that hands a
 * value back through a mutex and a condition variable (futexes). The workers share the scheduler, the
 * physical allocator, the heap, the file tables and the pipes, so their
 * locks are taken from every direction; the lock-order checker is on and
 * would end the run with a PANIC on any inversion.
 *
 * At the end every worker must have exited 0 and the kernel must have given
 * back what the workload took: the heap's live objects (vm.kmalloc.objects)
 * exactly, the available pages to within a few (a size class keeps one empty
 * slab page). A warm-up round before the baseline lets anything the kernel
 * creates once (a cached page of /bin/true, say) exist already. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <toll/toll.h>
#include <toll/utest.h>
#include <unistd.h>

enum {
    k_default_iters = 20,
    k_max_workers = 16,
    k_map_pages = 4,
    k_leak_pages = 12, /* one kept empty slab page per size class (9) and slack */
};

static unsigned long long counter(const char* name)
{
    unsigned long long v = 0;
    if (counter_get(name, &v) != 0)
        return ~0ull;
    return v;
}

static volatile sig_atomic_t g_caught;

static void on_usr1(int sig)
{
    (void)sig;
    ++g_caught;
}

/* Waits for @p pid and returns its wait status, or -1. */
static int reap(pid_t pid)
{
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return status;
}

/* One round of everything; returns 0, or the number of the step that failed. */
static int round_once(long page, int i)
{
    /* 1. fork, exec, exit. */
    pid_t p = fork();
    if (p == 0) {
        char* argv[] = {"/bin/true", NULL};
        char* envp[] = {NULL};
        execve("/bin/true", argv, envp);
        _exit(99);
    }
    int st = reap(p);
    if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 1;

    /* 2. fork and exit with a status the parent must see. */
    p = fork();
    if (p == 0)
        _exit(i & 0x7f);
    st = reap(p);
    if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != (i & 0x7f))
        return 2;

    /* 3. mmap, touch, mprotect, read back, munmap. */
    unsigned char* m = mmap(NULL, k_map_pages * page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 3;
    for (int k = 0; k < k_map_pages; ++k)
        m[k * page] = (unsigned char)(i + k);
    if (mprotect(m, k_map_pages * page, PROT_READ) != 0)
        return 4;
    for (int k = 0; k < k_map_pages; ++k)
        if (m[k * page] != (unsigned char)(i + k))
            return 5;
    if (munmap(m, k_map_pages * page) != 0)
        return 6;

    /* 4. A pipe from a child: 200 bytes arrive intact, then end of file. */
    int fds[2];
    if (pipe(fds) != 0)
        return 7;
    p = fork();
    if (p == 0) {
        close(fds[0]);
        unsigned char buf[200];
        for (int k = 0; k < (int)sizeof buf; ++k)
            buf[k] = (unsigned char)(k ^ i);
        _exit(write(fds[1], buf, sizeof buf) == (long)sizeof buf ? 0 : 1);
    }
    close(fds[1]);
    unsigned char got[200];
    long have = 0, n;
    while (have < (long)sizeof got && (n = read(fds[0], got + have, sizeof got - have)) > 0)
        have += n;
    char extra;
    long eof = read(fds[0], &extra, 1);
    close(fds[0]);
    st = reap(p);
    if (have != (long)sizeof got || eof != 0 || st < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
        return 8;
    for (int k = 0; k < (int)sizeof got; ++k)
        if (got[k] != (unsigned char)(k ^ i))
            return 9;

    /* 5. A signal to itself runs its handler before kill returns. */
    sig_atomic_t before = g_caught;
    if (kill(getpid(), SIGUSR1) != 0 || g_caught != before + 1)
        return 10;

    /* 6. SIGKILL ends a child blocked in pause(). */
    p = fork();
    if (p == 0) {
        for (;;)
            pause();
    }
    if (p < 0 || kill(p, SIGKILL) != 0)
        return 11;
    st = reap(p);
    if (st < 0 || !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
        return 12;
    return 0;
}

struct Handoff {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int value;
};

static void* thread_body(void* arg)
{
    struct Handoff* h = arg;
    pthread_mutex_lock(&h->lock);
    while (h->value == 0)
        pthread_cond_wait(&h->changed, &h->lock);
    h->value *= 2;
    pthread_cond_signal(&h->changed);
    pthread_mutex_unlock(&h->lock);
    return h;
}

/* 7. A thread: the value goes there and back through a futex-based condvar. */
static int thread_round(int i)
{
    struct Handoff h = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    pthread_t t;
    if (pthread_create(&t, NULL, thread_body, &h) != 0)
        return 13;
    pthread_mutex_lock(&h.lock);
    h.value = i + 1;
    pthread_cond_signal(&h.changed);
    while (h.value == i + 1)
        pthread_cond_wait(&h.changed, &h.lock);
    int got = h.value;
    pthread_mutex_unlock(&h.lock);
    void* ret = NULL;
    if (pthread_join(t, &ret) != 0 || ret != &h || got != 2 * (i + 1))
        return 14;
    return 0;
}

static int worker(long page, int iters, int id)
{
    for (int i = 0; i < iters; ++i) {
        int bad = round_once(page, i + id);
        if (!bad)
            bad = thread_round(i + id);
        if (bad)
            return bad;
    }
    return 0;
}

static long arg_value(int argc, char** argv, const char* key, long fallback)
{
    size_t len = strlen(key);
    for (int i = 1; i < argc; ++i)
        if (strncmp(argv[i], key, len) == 0 && argv[i][len] == '=')
            return strtol(argv[i] + len + 1, NULL, 10);
    return fallback;
}

int main(int argc, char** argv)
{
    long page = sysconf(_SC_PAGESIZE);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);

    unsigned long long cpus = counter("kern.cpus_online");
    if (!CHECK_MSG(cpus != ~0ull && cpus >= 1, "the kernel reports its online CPUs"))
        return utest_done();
    long workers = arg_value(argc, argv, "workers", (long)cpus);
    long iters = arg_value(argc, argv, "iters", k_default_iters);
    if (workers < 1 || workers > k_max_workers)
        workers = workers < 1 ? 1 : k_max_workers;

    CHECK_EQ(round_once(page, 0), 0); /* warm-up, before the baseline */
    CHECK_EQ(thread_round(0), 0);
    unsigned long long free0 = counter("vm.phys.available_pages");
    unsigned long long objs0 = counter("vm.kmalloc.objects");
    unsigned long long forks0 = counter("proc.forks");
    unsigned long long execs0 = counter("proc.execs");
    unsigned long long sigs0 = counter("signal.handlers_run");
    unsigned long long futex0 = counter("futex.waits");
    if (!CHECK_MSG(free0 != ~0ull && objs0 != ~0ull, "the kernel exposes free pages and heap objects"))
        return utest_done();
    NOTE("%llu CPUs, %ld workers x %ld rounds; start: %llu pages free, %llu heap objects", cpus,
         workers, iters, free0, objs0);

    pid_t pids[k_max_workers];
    int started = 0;
    for (long w = 0; w < workers; ++w) {
        pid_t p = fork();
        if (p == 0)
            _exit(worker(page, (int)iters, (int)w * 1000));
        if (p > 0)
            pids[started++] = p;
    }
    CHECK_EQ(started, (int)workers);
    int clean = 0;
    for (int w = 0; w < started; ++w) {
        int st = reap(pids[w]);
        if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
            ++clean;
        else
            NOTE("worker %d: status 0x%x (exit code = the failed step)", w, st);
    }
    CHECK_EQ(clean, started);

    unsigned long long forks = counter("proc.forks") - forks0;
    unsigned long long execs = counter("proc.execs") - execs0;
    unsigned long long sigs = counter("signal.handlers_run") - sigs0;
    unsigned long long futex_waits = counter("futex.waits") - futex0;
    unsigned long long free1 = counter("vm.phys.available_pages");
    unsigned long long objs1 = counter("vm.kmalloc.objects");
    NOTE("%llu forks, %llu execs, %llu handlers run, %llu futex waits; end: %llu pages free, "
         "%llu heap objects",
         forks, execs, sigs, futex_waits, free1, objs1);
    /* Every round forks 4 and execs 1; the workers themselves fork once. A
     * thread is a clone, not a fork; how often its condition variable
     * sleeps depends on the interleaving, so the futex waits are reported,
     * not checked. */
    CHECK_EQ(forks, (unsigned long long)(workers * (4 * iters + 1)));
    CHECK_EQ(execs, (unsigned long long)(workers * iters));
    CHECK_EQ(sigs, (unsigned long long)(workers * iters));
    CHECK_MSG(objs1 == objs0, "the heap's live objects return to their starting count");
    CHECK_MSG(free1 + k_leak_pages >= free0 && free1 <= free0 + k_leak_pages,
              "the available pages return to within a few of the start");
    return utest_done();
}
