// /dev/console (the serial port, with a small line discipline), /dev/zero,
// /dev/null, /dev/full and /dev/random.
#include "kernel/sys/devices.h"
#include "kernel/arch/console.h"
#include "kernel/kern/console.h"
#include "kernel/proc/process.h"
#include "kernel/proc/thread.h"
#include "kernel/sys/uaccess.h"
#include "lib/string.h"

namespace toll::sys {
namespace {

constexpr int k_s_ifchr = 020000;

// --- /dev/zero and /dev/null ---------------------------------------------

const uint8_t k_zeros[1024] = {};

long zero_read(File&, uintptr_t buffer, size_t count)
{
    // Copy out in chunks from a block of zeros: one copyout per chunk, which
    // is what the /dev/zero benchmarks measure.
    size_t done = 0;
    while (done < count) {
        size_t n = count - done < sizeof k_zeros ? count - done : sizeof k_zeros;
        if (Errno e = copyout(buffer + done, k_zeros, n); e != k_ok)
            return done ? static_cast<long>(done) : -e;
        done += n;
    }
    return static_cast<long>(count);
}

long null_read(File&, uintptr_t, size_t)
{
    return 0;
}

long sink_write(File&, uintptr_t buffer, size_t count)
{
    // Like Linux, /dev/null and /dev/zero accept any count without reading it.
    (void)buffer;
    return static_cast<long>(count);
}

long no_tty(File&, unsigned long, uintptr_t)
{
    return -k_enotty;
}

// /dev/full: reads as zeros, and every write fails as a full disk's would.
long full_write(File&, uintptr_t, size_t)
{
    return -k_enospc;
}

// /dev/random and /dev/urandom: the generator getrandom uses (xorshift,
// seeded by the clock). Toll has no entropy source: good for hash seeds and
// shuffles, never for keys.
uint64_t g_random_state = 0x2545F4914F6CDD1Dull; // lock: random

long random_read(File&, uintptr_t buffer, size_t count)
{
    uint8_t chunk[128];
    size_t done = 0;
    g_random_state ^= proc::ticks();
    while (done < count) {
        size_t n = count - done < sizeof chunk ? count - done : sizeof chunk;
        for (size_t i = 0; i < n; ++i) {
            g_random_state ^= g_random_state << 13;
            g_random_state ^= g_random_state >> 7;
            g_random_state ^= g_random_state << 17;
            chunk[i] = static_cast<uint8_t>(g_random_state >> 24);
        }
        if (Errno e = copyout(buffer + done, chunk, n); e != k_ok)
            return done ? static_cast<long>(done) : -e;
        done += n;
    }
    return static_cast<long>(count);
}

const FileOps k_zero_ops = {zero_read, sink_write, no_tty, nullptr, k_s_ifchr};
const FileOps k_full_ops = {zero_read, full_write, no_tty, nullptr, k_s_ifchr};
const FileOps k_random_ops = {random_read, sink_write, no_tty, nullptr, k_s_ifchr};
const FileOps k_null_ops = {null_read, sink_write, no_tty, nullptr, k_s_ifchr};

// --- /dev/console ----------------------------------------------------------

constexpr size_t k_line_max = 256;
char g_line[k_line_max]; // the line being edited
size_t g_line_length;
char g_ready[k_line_max * 2]; // completed lines waiting for read()
size_t g_ready_length;
bool g_eof_pending;

long console_write(File&, uintptr_t buffer, size_t count)
{
    char chunk[128];
    size_t done = 0;
    while (done < count) {
        size_t n = count - done < sizeof chunk ? count - done : sizeof chunk;
        if (Errno e = copyin(chunk, buffer + done, n); e != k_ok)
            return done ? static_cast<long>(done) : -e;
        console_write_bytes(chunk, n); // a chunk never interleaves with another CPU's
        done += n;
    }
    return static_cast<long>(count);
}

long console_read(File&, uintptr_t buffer, size_t count)
{
    while (g_ready_length == 0 && !g_eof_pending) {
        if (proc::interrupted())
            return -k_erestartsys;
        proc::sleep_on_interruptible(&g_ready_length);
    }
    if (g_ready_length == 0) {
        g_eof_pending = false; // Ctrl-D on an empty line: end of file, once
        return 0;
    }
    size_t n = g_ready_length < count ? g_ready_length : count;
    if (Errno e = copyout(buffer, g_ready, n); e != k_ok)
        return -e;
    memmove(g_ready, g_ready + n, g_ready_length - n);
    g_ready_length -= n;
    return static_cast<long>(n);
}

// Linux, include/uapi/asm-generic/ioctls.h (the same numbers on i386 and
// arm64): the terminal requests a shell makes.
constexpr unsigned long k_tcgets = 0x5401, k_tcsets = 0x5402, k_tcsetsw = 0x5403,
                        k_tcsetsf = 0x5404, k_tiocgpgrp = 0x540F, k_tiocspgrp = 0x5410,
                        k_tiocgwinsz = 0x5413, k_tiocswinsz = 0x5414;

// Linux, include/uapi/asm-generic/termbits.h: the kernel's struct termios
// (four flag words, the line discipline, 19 control characters), 36 bytes.
struct Termios {
    uint32_t iflag, oflag, cflag, lflag;
    uint8_t line;
    uint8_t cc[19];
};
static_assert(sizeof(Termios) == 36, "Linux's struct termios");

// Linux's defaults for a serial console: ICRNL | IXON; OPOST | ONLCR;
// B38400 | CS8 | CREAD | HUPCL; ISIG | ICANON | ECHO | ECHOE | ECHOK |
// ECHOCTL | ECHOKE | IEXTEN (termbits.h), and the usual control characters
// (VINTR ^C, VQUIT ^\\, VERASE DEL, VKILL ^U, VEOF ^D, VMIN 1).
Termios g_termios = {0000400 | 0002000,
                     0000001 | 0000004,
                     0000017 | 0000060 | 0000200 | 0002000,
                     0000001 | 0000002 | 0000010 | 0000020 | 0000040 | 0001000 | 0004000 | 0100000,
                     0,
                     {3, 28, 127, 21, 4, 0, 1, 0, 17, 19, 26, 0, 18, 15, 23, 22, 0, 0, 0}};
int g_foreground; // the terminal's foreground process group (0: none yet); lock: console

// The line discipline here is Toll's own (echo and line editing always on):
// TCSETS is remembered and reported back, but does not change it.
long console_ioctl(File&, unsigned long request, uintptr_t argument)
{
    switch (request) {
    case k_tcgets:
        return -copyout(argument, &g_termios, sizeof g_termios);
    case k_tcsets:
    case k_tcsetsw:
    case k_tcsetsf:
        return -copyin(&g_termios, argument, sizeof g_termios);
    case k_tiocgpgrp: {
        proc::Process* p = proc::current_process();
        int group = g_foreground ? g_foreground : (p ? p->pgid : 0);
        return -copyout(argument, &group, sizeof group);
    }
    case k_tiocspgrp: {
        int group;
        if (Errno e = copyin(&group, argument, sizeof group); e != k_ok)
            return -e;
        if (group < 0)
            return -k_einval;
        g_foreground = group;
        return 0;
    }
    case k_tiocgwinsz: {
        // A serial line has no size of its own: Linux's answer is rows and
        // columns 0, which programs read as "use the default".
        uint16_t winsize[4] = {0, 0, 0, 0};
        return -copyout(argument, winsize, sizeof winsize);
    }
    case k_tiocswinsz:
        return 0;
    default:
        return -k_enotty;
    }
}

// Readable when a read would not wait: a completed line, or a Ctrl-D's end
// of file; the UART takes every write.
int console_poll(File&)
{
    int ready = k_pollout | k_pollwrnorm;
    if (__atomic_load_n(&g_ready_length, __ATOMIC_RELAXED) ||
        __atomic_load_n(&g_eof_pending, __ATOMIC_RELAXED))
        ready |= k_pollin | k_pollrdnorm;
    return ready;
}

const FileOps k_console_ops = {console_read, console_write, console_ioctl,
                               nullptr,      k_s_ifchr,     console_poll};

void finish_line()
{
    if (g_ready_length + g_line_length <= sizeof g_ready) {
        memcpy(g_ready + g_ready_length, g_line, g_line_length);
        g_ready_length += g_line_length;
    }
    g_line_length = 0;
    proc::wakeup(&g_ready_length);
    poll_notify();
}

} // namespace

const FileOps* device_lookup(const char* path)
{
    if (strcmp(path, "/dev/console") == 0 || strcmp(path, "/dev/tty") == 0)
        return &k_console_ops;
    if (strcmp(path, "/dev/zero") == 0)
        return &k_zero_ops;
    if (strcmp(path, "/dev/null") == 0)
        return &k_null_ops;
    if (strcmp(path, "/dev/full") == 0)
        return &k_full_ops;
    if (strcmp(path, "/dev/random") == 0 || strcmp(path, "/dev/urandom") == 0)
        return &k_random_ops;
    return nullptr;
}

const char* device_name(const FileOps* ops)
{
    if (ops == &k_console_ops)
        return "/dev/console";
    if (ops == &k_zero_ops)
        return "/dev/zero";
    if (ops == &k_null_ops)
        return "/dev/null";
    if (ops == &k_full_ops)
        return "/dev/full";
    return ops == &k_random_ops ? "/dev/urandom" : nullptr;
}

FileRef console_open()
{
    return file_new(&k_console_ops, k_o_rdwr);
}

void console_input_byte(char c)
{
    constexpr char k_backspace = 0x08, k_delete = 0x7F, k_ctrl_d = 0x04, k_ctrl_u = 0x15;
    if (c == '\r')
        c = '\n';
    if (c == k_backspace || c == k_delete) {
        if (g_line_length) {
            --g_line_length;
            kprintf("\b \b");
        }
        return;
    }
    if (c == k_ctrl_u) {
        while (g_line_length) {
            --g_line_length;
            kprintf("\b \b");
        }
        return;
    }
    if (c == k_ctrl_d) {
        if (g_line_length == 0)
            g_eof_pending = true;
        finish_line();
        return;
    }
    if (g_line_length < k_line_max - 1) {
        g_line[g_line_length++] = c;
        kprintf("%c", c); // echo
    }
    if (c == '\n')
        finish_line();
}

} // namespace toll::sys
