// Pipes: a 4 KB ring buffer between a read end and a write end. Reads block
// until data or end of file; writes block while the pipe is full and fail
// with EPIPE (and SIGPIPE) once no reader is left. A write of at most
// PIPE_BUF bytes is atomic; O_NONBLOCK turns every wait into EAGAIN.
//
// Each pipe has a spinlock ("pipe") over its ring and its ends' counts; a
// reader or writer checks for data or room under it and sleeps with
// sleep_on(channel, lock), which releases it while asleep, so that the
// other end's change and wakeup cannot come between the check and the sleep.
// The copy to or from user memory happens under it too: a fault there takes
// the address space's lock after the pipe's (the order kernel/README.md
// gives), and never sleeps.
#include "kernel/kern/counters.h"
#include "kernel/kern/spinlock.h"
#include "kernel/proc/process.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/file.h"
#include "kernel/sys/uaccess.h"
#include "kernel/vm/kmalloc.h"

namespace toll::sys {
namespace {

TOLL_COUNTER(g_pipe_bytes, "pipe.bytes");
TOLL_COUNTER(g_pipe_waits, "pipe.waits");

constexpr size_t k_pipe_size = 4096;
// POSIX PIPE_BUF (Linux's value): writes up to this size never interleave
// with other writers' data.
constexpr size_t k_pipe_buf = 4096;
static_assert(k_pipe_buf <= k_pipe_size, "an atomic write must fit in the buffer");
constexpr int k_s_ififo = 010000;

struct Pipe {
    Spinlock lock{"pipe"}; ///< guards everything below
    uint8_t buffer[k_pipe_size];
    size_t head = 0;  ///< next byte to read
    size_t count = 0; ///< bytes in the buffer
    int readers = 0;  ///< read ends open (Files), counted by open_end
    int writers = 0;  ///< write ends open
    // Threads asleep for data (on &count) and for room (on &head): a change
    // wakes a side only when it has someone asleep, which is seen here under
    // the lock rather than by hashing the channel to its queue.
    unsigned reading = 0;
    unsigned writing = 0;
};

// Sleeps on @p channel with the pipe's lock held, counted in @p waiting.
void sleep_counted(Pipe* p, const void* channel, unsigned& waiting)
{
    ++waiting;
    proc::sleep_on_interruptible(channel, p->lock);
    --waiting;
}

// Both wake-ups also tell poll and select that the pipe changed.
void wake_readers(Pipe* p)
{
    if (p->reading)
        proc::wakeup(&p->count);
    poll_notify();
}

void wake_writers(Pipe* p)
{
    if (p->writing)
        proc::wakeup(&p->head);
    poll_notify();
}

long pipe_read(File& f, uintptr_t buffer, size_t count)
{
    auto* p = static_cast<Pipe*>(f.object);
    SpinGuard g(p->lock);
    while (p->count == 0) {
        if (p->writers == 0 || count == 0)
            return 0;
        if (f.flags & k_o_nonblock)
            return -k_eagain;
        if (proc::interrupted())
            return -k_erestartsys;
        g_pipe_waits.add();
        sleep_counted(p, &p->count, p->reading);
    }
    size_t done = 0;
    while (done < count && p->count) {
        size_t run = k_pipe_size - p->head;
        if (run > p->count)
            run = p->count;
        if (run > count - done)
            run = count - done;
        if (Errno e = copyout(buffer + done, p->buffer + p->head, run); e != k_ok)
            return done ? static_cast<long>(done) : -e;
        p->head = (p->head + run) % k_pipe_size;
        p->count -= run;
        done += run;
    }
    g_pipe_bytes.add(done);
    wake_writers(p); // writers wait for room on &head
    return static_cast<long>(done);
}

long write_locked(Pipe* p, File& f, uintptr_t buffer, size_t count, bool* broken)
{
    // An atomic write waits for room for all of it, then copies it without
    // sleeping (the kernel is not preempted), so no other writer's bytes
    // can come between. A longer one goes in as room appears.
    size_t first_room = count <= k_pipe_buf ? count : 1;
    size_t done = 0;
    while (done < count) {
        if (p->readers == 0) {
            *broken = true;
            return done ? static_cast<long>(done) : -k_epipe;
        }
        if (k_pipe_size - p->count < (done ? 1 : first_room)) {
            if (f.flags & k_o_nonblock)
                return done ? static_cast<long>(done) : -k_eagain;
            if (proc::interrupted())
                return done ? static_cast<long>(done) : -k_erestartsys;
            wake_readers(p);
            g_pipe_waits.add();
            sleep_counted(p, &p->head, p->writing);
            continue;
        }
        size_t tail = (p->head + p->count) % k_pipe_size;
        size_t run = tail >= p->head ? k_pipe_size - tail : p->head - tail;
        if (run > k_pipe_size - p->count)
            run = k_pipe_size - p->count;
        if (run > count - done)
            run = count - done;
        if (Errno e = copyin(p->buffer + tail, buffer + done, run); e != k_ok)
            return done ? static_cast<long>(done) : -e;
        p->count += run;
        done += run;
    }
    wake_readers(p); // readers wait for data on &count
    return static_cast<long>(done);
}

long pipe_write(File& f, uintptr_t buffer, size_t count)
{
    auto* p = static_cast<Pipe*>(f.object);
    bool broken = false;
    long result;
    {
        SpinGuard g(p->lock);
        result = write_locked(p, f, buffer, count, &broken);
    }
    // Linux: the writer also gets SIGPIPE, which ends it by default; sent
    // outside the pipe's lock, which signals know nothing of.
    if (broken) {
        SpinGuard g(proc::process_table_lock());
        proc::signal_send(*proc::current_process(), TOLL_SIGPIPE, SigInfo{});
    }
    return result;
}

void release_end(File& f, bool reader)
{
    auto* p = static_cast<Pipe*>(f.object);
    bool last;
    {
        SpinGuard g(p->lock);
        if (reader)
            --p->readers;
        else
            --p->writers;
        wake_readers(p);
        wake_writers(p);
        last = p->readers == 0 && p->writers == 0;
    }
    if (last) // no end is left to reach it: nobody else can take the lock
        destroy(p);
}

void release_read(File& f)
{
    release_end(f, true);
}

void release_write(File& f)
{
    release_end(f, false);
}

long pipe_no_write(File&, uintptr_t, size_t)
{
    return -k_ebadf;
}

long pipe_no_read(File&, uintptr_t, size_t)
{
    return -k_ebadf;
}

// What poll sees of each end, as Linux's pipe_poll: the read end is
// readable with data or with no writer left (end of file, and POLLHUP); the
// write end writable with room, and POLLERR once no reader is left.
int poll_read_end(File& f)
{
    auto* p = static_cast<Pipe*>(f.object);
    SpinGuard g(p->lock);
    int ready = p->count ? k_pollin | k_pollrdnorm : 0;
    if (p->writers == 0)
        ready |= k_pollhup;
    return ready;
}

int poll_write_end(File& f)
{
    auto* p = static_cast<Pipe*>(f.object);
    SpinGuard g(p->lock);
    int ready = p->count < k_pipe_size ? k_pollout | k_pollwrnorm : 0;
    if (p->readers == 0)
        ready |= k_pollerr;
    return ready;
}

const FileOps k_read_end = {pipe_read,    pipe_no_write, nullptr,
                            release_read, k_s_ififo,     poll_read_end};
const FileOps k_write_end = {pipe_no_read,  pipe_write, nullptr,
                             release_write, k_s_ififo,  poll_write_end};

// A new end of @p p (@p ops says which), counted in the pipe, so that its
// release (release_end) balances it; empty when memory is short.
FileRef open_end(Pipe* p, const FileOps* ops, int flags)
{
    FileRef f = file_new(ops, flags);
    if (f) {
        f->object = p;
        SpinGuard g(p->lock);
        ++(ops == &k_read_end ? p->readers : p->writers);
    }
    return f;
}

} // namespace

Result<PipeEnds> pipe_create()
{
    Pipe* p = make<Pipe>();
    if (!p)
        return k_enomem;
    FileRef r = open_end(p, &k_read_end, k_o_rdonly);
    FileRef w = open_end(p, &k_write_end, k_o_wronly);
    if (!r && !w)
        destroy(p); // no end was made to release it
    if (!r || !w)
        return k_enomem; // the end that was made is dropped, and the pipe with it
    return PipeEnds{toll::move(r), toll::move(w)};
}

} // namespace toll::sys
