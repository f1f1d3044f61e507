// Futexes: wait queues hashed by (address space, user address), as Linux
// keys a private futex. Toll's only memory shared between address spaces
// would be one mapping in two of them, which it does not make, so the
// shared futexes (no FUTEX_PRIVATE_FLAG) are keyed the same way; a port to
// shared mappings would key those by the physical page instead.
//
// Locking: each bucket has a spinlock ("futex.bucket"). A waiter takes it
// before reading the user's word and holds it until it is queued and asleep
// (sleep_on releases it then), and a waker holds it over its walk of the
// bucket, so that a wake between the read and the queueing cannot be lost:
// the user's store to the word comes before its futex_wake, and that wake
// either finds the waiter queued or comes before the waiter's read, which
// then sees the new value. A requeue holds both buckets' locks, the
// lower-addressed first (two locks of one class, always in one order). A
// requeued waiter's bucket changes under it, so a waiter that wakes on its
// own (a timeout, a signal) finds its bucket again under the lock
// (lock_bucket_of), as Linux's futex_q.lock_ptr is rechecked.
//
// The read of the word may fault with the lock held: the fault takes its
// address space's lock (vm.space, below futex.bucket in the order) and
// maps an anonymous page or fails; it never sleeps.
#include "kernel/proc/futex.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/uaccess.h"

namespace toll::proc {
namespace {

TOLL_COUNTER(g_waits, "futex.waits");
TOLL_COUNTER(g_wakes, "futex.wakes");
TOLL_COUNTER(g_timeouts, "futex.timeouts");
TOLL_COUNTER(g_requeues, "futex.requeues");

// One sleeping thread, on the stack of its futex_wait: it sleeps on its own
// record, so a wake reaches exactly the threads it picks.
struct Bucket;

struct Waiter {
    vm::VmSpace* space;
    uintptr_t uaddr;
    uint32_t bitset;
    Bucket* bucket = nullptr; // the bucket it is queued on (a requeue moves it)
    bool woken = false;
    Waiter* next = nullptr;
};

// A bucket: a FIFO list of waiters whose keys hash to it (several keys
// may share one), under its lock.
struct Bucket {
    Spinlock lock{"futex.bucket"};
    Waiter* head = nullptr;
    Waiter* tail = nullptr;
};

constexpr unsigned k_buckets = 64; // a power of two
Bucket g_buckets[k_buckets];

Bucket& bucket_of(const vm::VmSpace* space, uintptr_t uaddr)
{
    // The word's address, less its two always-zero bits, mixed with the
    // address space's (Knuth's multiplicative hash, 2^32 / golden ratio).
    constexpr uint32_t k_golden = 0x9E3779B9u;
    auto key = static_cast<uint32_t>((uaddr >> 2) ^ (reinterpret_cast<uintptr_t>(space) >> 4));
    return g_buckets[(key * k_golden) >> (32 - 6)];
}
static_assert(k_buckets == 1u << 6, "bucket_of keeps the top 6 bits");

void enqueue(Bucket& b, Waiter* w)
{
    w->next = nullptr;
    __atomic_store_n(&w->bucket, &b, __ATOMIC_RELAXED);
    if (b.tail)
        b.tail->next = w;
    else
        b.head = w;
    b.tail = w;
}

// Takes @p w off @p b; false if it is not there (a wake took it first).
bool remove(Bucket& b, Waiter* w)
{
    Waiter* prev = nullptr;
    for (Waiter* x = b.head; x; prev = x, x = x->next)
        if (x == w) {
            (prev ? prev->next : b.head) = x->next;
            if (b.tail == x)
                b.tail = prev;
            return true;
        }
    return false;
}

// Walks @p b's waiters for (@p space, @p uaddr) meeting @p bitset, oldest
// first, handing each to @p take until it returns false. @p take gets the
// waiter already off the list.
template <typename Take>
void take_waiters(Bucket& b, const vm::VmSpace* space, uintptr_t uaddr, uint32_t bitset, Take take)
{
    Waiter* prev = nullptr;
    for (Waiter* w = b.head; w;) {
        Waiter* next = w->next;
        if (w->space == space && w->uaddr == uaddr && (w->bitset & bitset)) {
            (prev ? prev->next : b.head) = next;
            if (b.tail == w)
                b.tail = prev;
            if (!take(w))
                return;
        } else {
            prev = w;
        }
        w = next;
    }
}

void wake_one(Waiter* w)
{
    w->woken = true;
    g_wakes.add();
    wakeup(w);
}

// Takes the lock of the bucket @p w is queued on, which a requeue on another
// CPU may change until we hold the lock of the bucket it names: then it is
// ours, and stays. Returns that bucket, locked.
Bucket& lock_bucket_of(Waiter& w)
{
    for (;;) {
        Bucket* b = __atomic_load_n(&w.bucket, __ATOMIC_RELAXED);
        b->lock.lock();
        if (__atomic_load_n(&w.bucket, __ATOMIC_RELAXED) == b)
            return *b;
        b->lock.unlock();
    }
}

Errno check_address(uintptr_t uaddr)
{
    if (uaddr % sizeof(uint32_t))
        return k_einval; // Linux: the word must be aligned
    if (!sys::user_range_ok(uaddr, sizeof(uint32_t)))
        return k_efault;
    return k_ok;
}

// Holds two buckets' locks (one, if they are the same bucket), the
// lower-addressed first, for a requeue's lifetime.
class BucketPair {
  public:
    BucketPair(Bucket& a, Bucket& b) : m_first(&a < &b ? a : b), m_second(&a < &b ? b : a)
    {
        m_first.lock.lock();
        if (&m_second != &m_first)
            m_second.lock.lock();
    }
    ~BucketPair()
    {
        if (&m_second != &m_first)
            m_second.lock.unlock();
        m_first.lock.unlock();
    }
    BucketPair(const BucketPair&) = delete;
    BucketPair& operator=(const BucketPair&) = delete;

  private:
    Bucket& m_first;
    Bucket& m_second;
};

} // namespace

Result<int> futex_wait(vm::VmSpace* space, uintptr_t uaddr, uint32_t expected, uint64_t deadline,
                       uint32_t bitset)
{
    TRY(check_address(uaddr));
    Bucket* b = &bucket_of(space, uaddr);
    b->lock.lock(); // a wake from another thread comes after the read, or not at all
    uint32_t value;
    // (Under a spinlock the read may not sleep: see the top of the file.
    // Linux reads with page faults disabled instead and, on a fault, drops
    // the lock, faults the page in and starts again.)
    if (Errno e = sys::copyin(&value, uaddr, sizeof value); e != k_ok) {
        b->lock.unlock();
        return e;
    }
    if (value != expected) {
        b->lock.unlock();
        return k_eagain;
    }
    g_waits.add();
    Waiter w{space, uaddr, bitset};
    enqueue(*b, &w);
    // The bucket's lock is dropped by the sleep and taken again on waking;
    // a requeue may have moved the waiter to another bucket meanwhile.
    Result<int> result = 0;
    for (;;) {
        if (w.woken) {
            result = 0;
            break;
        }
        if (interrupted()) {
            remove(*b, &w);
            result = k_erestartsys;
            break;
        }
        if (deadline && ticks() >= deadline) {
            remove(*b, &w);
            g_timeouts.add();
            result = k_etimedout;
            break;
        }
        sleep_on_interruptible(&w, b->lock, deadline);
        if (__atomic_load_n(&w.bucket, __ATOMIC_RELAXED) != b) {
            b->lock.unlock();
            b = &lock_bucket_of(w);
        }
    }
    b->lock.unlock();
    return result;
}

int futex_wake(vm::VmSpace* space, uintptr_t uaddr, int count, uint32_t bitset)
{
    Bucket& b = bucket_of(space, uaddr);
    SpinGuard g(b.lock);
    int woken = 0;
    if (count > 0)
        take_waiters(b, space, uaddr, bitset, [&](Waiter* w) {
            wake_one(w);
            return ++woken < count;
        });
    return woken;
}

Result<int> futex_requeue(vm::VmSpace* space, uintptr_t uaddr, int wake, int requeue,
                          uintptr_t uaddr2, const uint32_t* expected)
{
    if (wake < 0 || requeue < 0)
        return k_einval;
    TRY(check_address(uaddr));
    TRY(check_address(uaddr2));
    if (wake == 0 && requeue == 0 && !expected)
        return 0;
    Bucket& from = bucket_of(space, uaddr);
    Bucket& to = bucket_of(space, uaddr2);
    BucketPair locked(from, to);
    if (expected) {
        uint32_t value;
        TRY(sys::copyin(&value, uaddr, sizeof value));
        if (value != *expected)
            return k_eagain;
    }
    int woken = 0, moved = 0;
    if (wake == 0 && requeue == 0)
        return 0;
    take_waiters(from, space, uaddr, k_futex_match_any, [&](Waiter* w) {
        if (woken < wake) {
            ++woken;
            wake_one(w);
        } else {
            ++moved;
            w->uaddr = uaddr2; // it sleeps on its record still: nothing to tell it
            enqueue(to, w);
            g_requeues.add();
        }
        return woken < wake || moved < requeue;
    });
    return woken + moved;
}

} // namespace toll::proc
