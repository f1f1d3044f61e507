// Result<T>: a value, or the Errno that says why there is none. The return
// type of a function that can fail and otherwise produces something
// (CONTRIBUTING.md, "Errors: one convention"); a function with nothing to
// return on success returns a plain Errno. Optional<T>, beside it, is a value
// or nothing, for a look-up whose "nothing" is an answer rather than a failure.
//
// Both trap the two bugs a sentinel hides: reading the value of a failure
// (value() asserts) and building a failure that says "no error" (a Result
// from k_ok asserts). Both carry move-only values such as FileRef: take the
// value out with release_value().
#pragma once
#include "kernel/kern/errno.h"
#include "kernel/kern/panic.h"
#include "kernel/kern/placement_new.h"

namespace toll {

/// std::move, for a kernel without the standard library.
template <typename T>
struct RemoveReference {
    using Type = T;
};
template <typename T>
struct RemoveReference<T&> {
    using Type = T;
};
template <typename T>
constexpr typename RemoveReference<T>::Type&& move(T&& value)
{
    return static_cast<typename RemoveReference<T>::Type&&>(value);
}

/// Either a T or an Errno other than k_ok. Construct it from either; test it
/// with ok() (or in a condition), then read value() or error(). TRY (below)
/// passes a failure on to the caller.
///
///     Result<size_t> n = copy_string_from_user(buf, uptr, size);
///     if (!n)
///         return -n.error();
///     use(n.value());
template <typename T>
class [[nodiscard]] Result {
  public:
    /// A success carrying @p value.
    Result(const T& value) : m_error(k_ok) { new (&m_value) T(value); }
    Result(T&& value) : m_error(k_ok) { new (&m_value) T(toll::move(value)); }

    /// A failure; @p error must not be k_ok (that would be a failure with
    /// no reason, a kernel bug, so it panics).
    Result(Errno error) : m_error(error) { TOLL_ASSERT(error != k_ok); }

    /// A system call's -errno is no value of T: `return -k_einval;` where a
    /// Result is returned does not compile (return k_einval).
    Result(NegatedErrno) = delete;

    Result(const Result& other) : m_error(other.m_error)
    {
        if (ok())
            new (&m_value) T(other.m_value);
    }
    Result(Result&& other) noexcept : m_error(other.m_error)
    {
        if (ok())
            new (&m_value) T(toll::move(other.m_value));
    }
    Result& operator=(const Result& other)
    {
        if (this != &other) {
            this->~Result();
            new (this) Result(other);
        }
        return *this;
    }
    Result& operator=(Result&& other) noexcept
    {
        if (this != &other) {
            this->~Result();
            new (this) Result(toll::move(other));
        }
        return *this;
    }
    ~Result()
    {
        if (ok())
            m_value.~T();
    }

    bool ok() const { return m_error == k_ok; }
    explicit operator bool() const { return ok(); }

    /// The value; a failure has none, and asking for it panics.
    const T& value() const
    {
        TOLL_ASSERT(ok());
        return m_value;
    }

    /// Moves the value out (for a move-only T such as FileRef); the Result
    /// keeps a moved-from T. Panics on a failure, as value() does.
    T release_value()
    {
        TOLL_ASSERT(ok());
        return toll::move(m_value);
    }

    /// Why there is no value; k_ok when there is one.
    Errno error() const { return m_error; }

    /// The value, or @p fallback on failure.
    T value_or(T fallback) const { return ok() ? m_value : fallback; }

  private:
    union {
        T m_value;
    };
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
    /// Nothing (no T is constructed).
    Optional() : m_has(false) {}

    /// @p value.
    Optional(const T& value) : m_has(true) { new (&m_value) T(value); }

    /// A -errno is no value of T (see Result).
    Optional(NegatedErrno) = delete;

    Optional(const Optional& other) : m_has(other.m_has)
    {
        if (m_has)
            new (&m_value) T(other.m_value);
    }
    Optional& operator=(const Optional& other)
    {
        if (this != &other) {
            this->~Optional();
            new (this) Optional(other);
        }
        return *this;
    }
    ~Optional()
    {
        if (m_has)
            m_value.~T();
    }

    bool has_value() const { return m_has; }
    explicit operator bool() const { return m_has; }

    /// The value; there is none when !has_value(), and asking for it panics.
    const T& value() const
    {
        TOLL_ASSERT(m_has);
        return m_value;
    }

    /// The value, or @p fallback when there is none.
    T value_or(T fallback) const { return m_has ? m_value : fallback; }

  private:
    union {
        T m_value;
    };
    bool m_has;
};

} // namespace toll

/// Evaluates @p expression, a Result or an Errno; on failure returns its
/// Errno from the enclosing function (which returns an Errno or a Result),
/// and otherwise yields the value (nothing, for an Errno). The statement
/// expression is a GCC and Clang extension, as in SerenityOS's TRY.
///
///     FileRef f = TRY(file_open(path, flags));
///     TRY(copyout(uptr, &st, sizeof st));
#define TRY(expression)                                                                            \
    ({                                                                                             \
        auto&& try_result_ = (expression);                                                         \
        if (::toll::try_failed(try_result_))                                                       \
            return ::toll::try_error(try_result_);                                                 \
        ::toll::try_release(try_result_);                                                          \
    })

namespace toll {

// TRY's helpers, overloaded for an Errno and a Result.
inline bool try_failed(Errno e)
{
    return e != k_ok;
}
inline Errno try_error(Errno e)
{
    return e;
}
inline void try_release(Errno)
{
}
template <typename T>
bool try_failed(const Result<T>& r)
{
    return !r.ok();
}
template <typename T>
Errno try_error(const Result<T>& r)
{
    return r.error();
}
template <typename T>
T try_release(Result<T>& r)
{
    return r.release_value();
}

} // namespace toll
