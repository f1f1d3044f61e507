// Error numbers, with Linux's values: Toll speaks Linux's system call ABI, so
// a system call returns -errno exactly as Linux would.
#pragma once

namespace toll {

/// A scoped enumeration, so that an Errno never becomes a number by accident:
/// `int n = k_efault;` does not compile, and neither does `if (e)` (write
/// `e != k_ok`). The enumerators are brought into namespace toll below, so
/// the names stay k_efault and friends.
enum class Errno : int {
    k_ok = 0,
    k_eperm = 1,
    k_enoent = 2,
    k_esrch = 3,
    k_eintr = 4,
    k_eio = 5,
    k_e2big = 7,
    k_enoexec = 8,
    k_ebadf = 9,
    k_echild = 10,
    k_eagain = 11,
    k_enomem = 12,
    k_eacces = 13,
    k_efault = 14,
    k_ebusy = 16,
    k_eexist = 17,
    k_exdev = 18,
    k_enodev = 19,
    k_enotdir = 20,
    k_eisdir = 21,
    k_einval = 22,
    k_enfile = 23,
    k_emfile = 24,
    k_enotty = 25,
    k_efbig = 27,
    k_enospc = 28,
    k_espipe = 29,
    k_erofs = 30,
    k_emlink = 31,
    k_epipe = 32,
    k_erange = 34,
    k_enametoolong = 36,
    k_enosys = 38,
    k_enotempty = 39,
    k_eloop = 40,
    // The socket layer's (Linux, include/uapi/asm-generic/errno.h).
    k_enotsock = 88,
    k_edestaddrreq = 89,
    k_emsgsize = 90,
    k_eprototype = 91,
    k_enoprotoopt = 92,
    k_eprotonosupport = 93,
    k_esocktnosupport = 94,
    k_eopnotsupp = 95,
    k_eafnosupport = 97,
    k_eaddrinuse = 98,
    k_eaddrnotavail = 99,
    k_enetunreach = 101,
    k_enobufs = 105,
    k_eisconn = 106,
    k_enotconn = 107,
    k_etimedout = 110,
    k_econnrefused = 111,
    k_ehostunreach = 113,
    /// Never seen by a program: a blocking call interrupted by a signal. On
    /// the way out the call is restarted (no handler ran, or SA_RESTART) or
    /// returns EINTR (Linux's ERESTARTSYS, with its value).
    k_erestartsys = 512,
};
using enum Errno;

/// What a system call returns for @p e: -errno, as Linux returns it. A type
/// of its own, convertible to long only, so that Result and Optional can
/// refuse it: `return -k_emfile;` in a function returning Result<int> is a
/// compile error rather than a success carrying -24.
struct NegatedErrno {
    long value;
    constexpr operator long() const { return value; }
};

constexpr NegatedErrno operator-(Errno e)
{
    return NegatedErrno{-static_cast<long>(e)};
}

/// The number itself (for printing, or for a table indexed by errno).
constexpr int errno_value(Errno e)
{
    return static_cast<int>(e);
}

} // namespace toll
