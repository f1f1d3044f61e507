// Overflow-checked arithmetic for sizes and addresses that come from outside
// the kernel (a program's registers, a file's headers): the result is used
// only when the helper says it did not wrap.
#pragma once

namespace toll {

/// Stores @p a + @p b in @p *sum and returns true, or returns false (leaving
/// @p *sum unspecified) when the sum does not fit in T.
template <typename T>
[[nodiscard]] constexpr bool checked_add(T a, T b, T* sum)
{
    return !__builtin_add_overflow(a, b, sum);
}

/// Stores @p a * @p b in @p *product and returns true, or returns false when
/// the product does not fit in T.
template <typename T>
[[nodiscard]] constexpr bool checked_mul(T a, T b, T* product)
{
    return !__builtin_mul_overflow(a, b, product);
}

/// True when [@p start, @p start + @p length) lies inside [0, @p limit],
/// computed without wrapping.
template <typename T>
[[nodiscard]] constexpr bool range_within(T start, T length, T limit)
{
    T end;
    return checked_add(start, length, &end) && end <= limit;
}

} // namespace toll
