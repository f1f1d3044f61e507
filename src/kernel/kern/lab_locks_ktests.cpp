// The locks lab's checks (labs/lab-locks): every online CPU runs the same
// loop at once, started by an IPI (ipi_call), and the boot CPU checks what
// came out. Under QEMU's deterministic mode the vCPUs take turns on one host
// thread, so a race loses the same counts on every run and the spins are
// exact numbers.
#include "kernel/arch/cpu.h"
#include "kernel/kern/cpu.h"
#include "kernel/kern/ipi.h"
#include "kernel/kern/ktest.h"
#include "kernel/kern/lab_locks.h"

namespace toll {
namespace {

constexpr unsigned k_rounds = 20000;                // acquisitions (or adds) per CPU
constexpr uint64_t k_wait_spins = 2'000'000'000ull; // the others must finish well before
constexpr int k_window = 4;                         // relaxes between a read and its write

struct Job {
    TicketLock lock;
    PerCpuCounter counter;
    bool use_lock = true;      // false: the per-CPU counter's loop
    unsigned long guarded = 0; // incremented under the lock, with a window (a word)
    unsigned long spins = 0;   // the turns every CPU waited, summed
    unsigned done = 0;         // CPUs finished
};

void run_share(void* arg)
{
    auto* job = static_cast<Job*>(arg);
    unsigned long spins = 0;
    for (unsigned i = 0; i < k_rounds; ++i) {
        if (!job->use_lock) {
            job->counter.add();
            continue;
        }
        spins += static_cast<unsigned long>(job->lock.acquire());
        unsigned long v = __atomic_load_n(&job->guarded, __ATOMIC_RELAXED);
        for (int k = 0; k < k_window; ++k)
            arch::cpu_relax(); // room for another CPU to slip in, were it let
        __atomic_store_n(&job->guarded, v + 1, __ATOMIC_RELAXED);
        job->lock.release();
    }
    __atomic_fetch_add(&job->spins, spins, __ATOMIC_RELAXED);
    __atomic_fetch_add(&job->done, 1u, __ATOMIC_RELEASE);
}

// Runs run_share on every online CPU at once; returns how many took part.
unsigned run_everywhere(Job& job)
{
    unsigned self = this_cpu().id, cpus = 0;
    for (unsigned i = 0; i < k_max_cpus; ++i) {
        if (!cpu_by_id(i).online)
            continue;
        ++cpus;
        if (i != self)
            ipi_call(i, run_share, &job);
    }
    {
        arch::InterruptsOff off; // this CPU's share, like theirs, without a tick in it
        run_share(&job);
    }
    for (uint64_t s = 0; __atomic_load_n(&job.done, __ATOMIC_ACQUIRE) < cpus && s < k_wait_spins;
         ++s)
        arch::cpu_relax();
    KEXPECT_EQ(__atomic_load_n(&job.done, __ATOMIC_ACQUIRE), cpus);
    return cpus;
}

KTEST("lab.locks.ticket_lock_excludes")
{
    static Job job; // the others write it after this frame could be gone
    job = Job{};
    // Alone, first: acquire takes a ticket that release serves.
    KEXPECT(!job.lock.busy());
    KEXPECT_EQ(job.lock.acquire(), 0u);
    KEXPECT(job.lock.busy());
    job.lock.release();
    KEXPECT(!job.lock.busy());
    unsigned cpus = run_everywhere(job);
    // Each CPU's increments are whole only if no other CPU held the lock
    // inside its window.
    KEXPECT_EQ(job.guarded, (unsigned long)k_rounds * cpus);
    // And the lock is free again: the next ticket is the one being served.
    KEXPECT(!job.lock.busy());
}

// At one CPU nothing can race: the count only proves add and read agree.
KTEST("lab.locks.percpu_counter_exact")
{
    static Job job;
    job = Job{};
    job.use_lock = false;
    unsigned cpus = run_everywhere(job);
    KEXPECT_EQ(job.counter.read(), (unsigned long)k_rounds * cpus);
}

// The contention measurement: the turns a CPU waits for the ticket lock per
// acquisition, in thousandths, at however many CPUs the boot has (run it at
// 1, 2 and 4). At one CPU nobody waits.
KTEST("lab.locks.bench.contention")
{
    static Job job;
    job = Job{};
    unsigned cpus = run_everywhere(job);
    KEXPECT_EQ(job.guarded, (unsigned long)k_rounds * cpus);
    ktest::metric("lab.locks.cpus", cpus, "count");
    ktest::metric("lab.locks.spins_per_acquire",
                  uint64_t(job.spins) * 1000 / (uint64_t(k_rounds) * cpus), "per1000");
}

} // namespace
} // namespace toll
