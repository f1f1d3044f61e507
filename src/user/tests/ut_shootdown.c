/* ut_shootdown: once munmap or mprotect returns, no thread on any CPU may
 * still use the old translation. One thread per other CPU, pinned there,
 * spins on a page (reading it, or writing it), so that its CPU's TLB holds
 * the translation; the main thread, on CPU 0, unmaps the range (or makes it
 * read-only) and then raises a flag. Each spinner reads the flag before
 * every access: an access that succeeds after it saw the flag went through
 * a translation the kernel had already taken away (a stale TLB entry that
 * the shootdown missed), and is reported; the right outcome is SIGSEGV on
 * the next access. Ranges of 1 page and of 64 (above the TLB shootdown's
 * full-flush ceiling) are both checked. With one CPU the spinner shares it
 * with the main thread and checks the local invalidation only. */
#define _GNU_SOURCE
#include "toll/utest.h"
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

enum { k_max_spinners = 7, k_page = 4096 };

struct spinner {
    pthread_t thread;
    int cpu;                    /* where it is pinned, -1 if nowhere */
    volatile unsigned char* at; /* the byte it reads or writes */
    int write;                  /* 1: it writes (mprotect), 0: it reads (munmap) */
    volatile int ready;         /* it has touched the page at least once */
    volatile int faulted;       /* it took SIGSEGV on the page */
    volatile int stale;         /* an access succeeded after the flag */
    volatile int on_cpu;        /* sched_getcpu() once pinned */
};

static volatile int g_flag; /* set once munmap or mprotect has returned */
static int g_cpus;          /* the CPUs this process may use, counted at the start */
static __thread sigjmp_buf t_escape;
static __thread struct spinner* t_self;

static void on_segv(int sig)
{
    (void)sig;
    if (t_self) {
        t_self->faulted = 1;
        siglongjmp(t_escape, 1);
    }
    _exit(99); /* the main thread never faults here */
}

static void* spin(void* arg)
{
    struct spinner* s = arg;
    t_self = s;
    if (s->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(s->cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
        s->on_cpu = sched_getcpu();
    }
    if (sigsetjmp(t_escape, 1))
        return NULL;
    for (unsigned n = 0;; ++n) {
        int seen = __atomic_load_n(&g_flag, __ATOMIC_ACQUIRE);
        if (s->write)
            *s->at = (unsigned char)n;
        else
            (void)*s->at;
        if (seen) {
            s->stale = 1; /* the access above used a translation that is gone */
            return NULL;
        }
        s->ready = 1;
        if (s->cpu < 0)
            sched_yield(); /* sharing the CPU with the main thread */
    }
}

static int cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n < 1 ? 1 : n;
}

/* Runs one round: @p pages pages, the spinners on the last one; unmaps them
 * (@p write == 0) or makes them read-only (@p write == 1). */
static void round_trip(int pages, int write)
{
    int n = g_cpus;
    int count = n > 1 ? n - 1 : 1;
    if (count > k_max_spinners)
        count = k_max_spinners;
    unsigned char* base = mmap(NULL, (size_t)pages * k_page, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!CHECK(base != MAP_FAILED))
        return;
    for (int i = 0; i < pages; ++i)
        base[i * k_page] = 1; /* every page present */
    struct spinner s[k_max_spinners] = {0};
    g_flag = 0;
    for (int i = 0; i < count; ++i) {
        s[i].cpu = n > 1 ? i + 1 : -1;
        s[i].at = base + (size_t)(pages - 1) * k_page + 64 * (unsigned)i;
        s[i].write = write;
        pthread_create(&s[i].thread, NULL, spin, &s[i]);
    }
    for (int i = 0; i < count; ++i)
        while (!s[i].ready)
            sched_yield();
    int r = write ? mprotect(base, (size_t)pages * k_page, PROT_READ)
                  : munmap(base, (size_t)pages * k_page);
    __atomic_store_n(&g_flag, 1, __ATOMIC_RELEASE);
    CHECK_EQ(r, 0);
    int faulted = 0, stale = 0, placed = 0;
    for (int i = 0; i < count; ++i) {
        pthread_join(s[i].thread, NULL);
        faulted += s[i].faulted;
        stale += s[i].stale;
        placed += s[i].cpu < 0 || s[i].on_cpu == s[i].cpu;
    }
    NOTE("%s of %d page(s): %d spinner(s) on %d CPU(s), %d faulted, %d used a stale translation",
         write ? "mprotect" : "munmap", pages, count, n, faulted, stale);
    CHECK_EQ(placed, count);
    CHECK_EQ(stale, 0);
    CHECK_EQ(faulted, count);
    if (write)
        munmap(base, (size_t)pages * k_page);
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_segv;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    g_cpus = cpus();
    cpu_set_t zero;
    CPU_ZERO(&zero);
    CPU_SET(0, &zero);
    CHECK_EQ(sched_setaffinity(0, sizeof zero, &zero), 0);
    round_trip(1, 0);
    round_trip(64, 0);
    round_trip(1, 1);
    round_trip(64, 1);
    return utest_done();
}
