// Error numbers, with Linux's values: Toll speaks Linux's system call ABI, so
// a system call returns -errno exactly as Linux would.
#pragma once

namespace toll {

enum Errno : int {
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
    k_enodev = 19,
    k_enotdir = 20,
    k_eisdir = 21,
    k_einval = 22,
    k_enfile = 23,
    k_emfile = 24,
    k_enotty = 25,
    k_espipe = 29,
    k_erofs = 30,
    k_epipe = 32,
    k_erange = 34,
    k_enametoolong = 36,
    k_enosys = 38,
    /// Never seen by a program: a blocking call interrupted by a signal. On
    /// the way out the call is restarted (no handler ran, or SA_RESTART) or
    /// returns EINTR (Linux's ERESTARTSYS, with its value).
    k_erestartsys = 512,
};

} // namespace toll
