/* lat_futex: a ping-pong between two threads of one process through one
 * futex word, and the creation and join of a thread. Each round trip is two
 * FUTEX_WAKEs, two FUTEX_WAITs and two switches between threads that share
 * an address space: no page-table switch, unlike lat_pipe's processes.
 * Usage: lat_futex [-n round trips] */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

enum { k_default_trips = 2000, k_warmup_trips = 10, k_creates_per_trip = 20 };
enum { k_futex_wait_private = 128, k_futex_wake_private = 129 }; /* linux/futex.h */

static volatile int g_turn; /* 0: the first thread's turn, 1: the partner's */
static uint64_t g_total;

static void wait_while(int value)
{
    while (__atomic_load_n(&g_turn, __ATOMIC_ACQUIRE) == value)
        syscall(SYS_futex, &g_turn, k_futex_wait_private, value, NULL, NULL, 0);
}

static void pass_to(int value)
{
    __atomic_store_n(&g_turn, value, __ATOMIC_RELEASE);
    syscall(SYS_futex, &g_turn, k_futex_wake_private, 1, NULL, NULL, 0);
}

static void* partner(void* arg)
{
    (void)arg;
    for (uint64_t i = 0; i < g_total; ++i) {
        wait_while(0);
        pass_to(0);
    }
    wait_while(0); /* the last turn, after the timing: its exit falls outside */
    return NULL;
}

static void* nothing(void* arg)
{
    return arg;
}

int main(int argc, char** argv)
{
    uint64_t trips;
    bench_iterations(argc, argv, k_default_trips, &trips);
    bench_init("lat_futex");
    g_total = trips + k_warmup_trips;
    pthread_t t;
    if (pthread_create(&t, NULL, partner, NULL) != 0)
        bench_fail("pthread_create failed");
    for (int i = 0; i < k_warmup_trips; ++i) {
        pass_to(1);
        wait_while(1);
    }
    struct BenchSpan span;
    bench_begin(&span);
    for (uint64_t i = 0; i < trips; ++i) {
        pass_to(1);
        wait_while(1);
    }
    bench_end(&span);
    pass_to(1);
    if (pthread_join(t, NULL) != 0)
        bench_fail("pthread_join failed");
    bench_report("lat_futex.roundtrip", &span, trips);

    uint64_t creates = trips / k_creates_per_trip + 1;
    bench_begin(&span);
    for (uint64_t i = 0; i < creates; ++i) {
        void* result;
        if (pthread_create(&t, NULL, nothing, &span) != 0 || pthread_join(t, &result) != 0 ||
            result != &span)
            bench_fail("a thread was not created and joined");
    }
    bench_end(&span);
    bench_report("lat_futex.create_join", &span, creates);
    return 0;
}
