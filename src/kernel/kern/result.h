// Result<T>: a value, or the Errno that says why there is none. The return
// type of a function that can fail and otherwise produces something
// (CONTRIBUTING.md, "Errors: one convention"); a function with nothing to
// return on success returns a plain Errno. Optional<T>, beside it, is a value
// or nothing, for a look-up whose "nothing" is an answer rather than a failure.
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

/// A T, or nothing: what a look-up returns when finding nothing is an
/// ordinary answer with no reason to give (no byte waiting at the UART, no
/// reserved page for this address), and no value of T is free to mean
/// "none". A failure with a cause is a Result instead.
///
///     Optional<uint8_t> c = uart_getc();
///     if (c)
///         console_input_byte(char(c.value()));
template <typename T>
class [[nodiscard]] Optional {
  public:
    /// Nothing.
    Optional() : m_value(), m_has(false) {}

    /// @p value.
    Optional(T value) : m_value(value), m_has(true) {}

    bool has_value() const { return m_has; }
    explicit operator bool() const { return m_has; }

    /// The value; meaningful only when has_value().
    T value() const { return m_value; }

    /// The value, or @p fallback when there is none.
    T value_or(T fallback) const { return m_has ? m_value : fallback; }

  private:
    T m_value;
    bool m_has;
};

} // namespace toll
