// Result<T>: a value, or the Errno that says why there is none. The return
// type of a function that can fail and otherwise produces something
// (CONTRIBUTING.md, "Errors: one convention"); a function with nothing to
// return on success returns a plain Errno.
#pragma once
#include "kernel/kern/errno.h"

namespace toll {

/// Either a T or an Errno other than k_ok. Construct it from either; test it
/// with ok() (or in a condition), then read value() or error().
///
///     Result<size_t> n = copy_string_from_user(buf, uptr, size);
///     if (!n)
///         return -n.error();
///     use(n.value());
template <typename T>
class [[nodiscard]] Result {
  public:
    /// A success carrying @p value.
    Result(T value) : m_value(value), m_error(k_ok) {}

    /// A failure; @p error must not be k_ok.
    Result(Errno error) : m_value(), m_error(error == k_ok ? k_einval : error) {}

    bool ok() const { return m_error == k_ok; }
    explicit operator bool() const { return ok(); }

    /// The value; meaningful only when ok().
    T value() const { return m_value; }

    /// Why there is no value; k_ok when there is one.
    Errno error() const { return m_error; }

    /// The value, or @p fallback on failure.
    T value_or(T fallback) const { return ok() ? m_value : fallback; }

  private:
    T m_value;
    Errno m_error;
};

} // namespace toll
