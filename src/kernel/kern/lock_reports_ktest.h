// For in-kernel tests of the lock-order checker: catches its reports
// instead of letting them panic, for the lifetime of a LockReports, and
// answers what they said. Only ktests include this.
#pragma once
#include "kernel/kern/spinlock.h"
#include "lib/string.h"
#include <stddef.h>

namespace toll {

class LockReports {
  public:
    LockReports()
    {
        s_count = 0;
        s_last[0] = '\0';
        lock_order_set_hook_for_test(record);
    }
    ~LockReports() { lock_order_set_hook_for_test(nullptr); }
    LockReports(const LockReports&) = delete;
    LockReports& operator=(const LockReports&) = delete;

    /// How many reports the checker made since construction.
    unsigned count() const { return s_count; }

    /// Whether the last report contains @p what.
    bool names(const char* what) const
    {
        size_t n = strlen(what);
        for (const char* p = s_last; *p; ++p)
            if (strncmp(p, what, n) == 0)
                return true;
        return false;
    }

  private:
    static void record(const char* message)
    {
        ++s_count;
        size_t n = strnlen(message, sizeof s_last - 1);
        memcpy(s_last, message, n);
        s_last[n] = '\0';
    }

    // The hook is a plain function: the state it writes is static.
    static inline char s_last[240];
    static inline unsigned s_count;
};

} // namespace toll
