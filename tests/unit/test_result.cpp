// Host tests of Result<T> (kernel/kern/result.h): a value or an Errno, never
// both, and never a success that carries an error.
#include "kernel/kern/result.h"
#include <catch2/catch.hpp>
#include <stddef.h>

using toll::Errno;
using toll::Result;

namespace {

Result<size_t> half(size_t n)
{
    if (n % 2)
        return toll::k_einval;
    return n / 2;
}

} // namespace

TEST_CASE("Result: a value is ok and carries no error")
{
    Result<size_t> r = half(8);
    REQUIRE(r.ok());
    CHECK(static_cast<bool>(r));
    CHECK(r.value() == 4);
    CHECK(r.error() == toll::k_ok);
    CHECK(r.value_or(99) == 4);
}

TEST_CASE("Result: an error is not ok, whatever value type it stands in for")
{
    Result<size_t> r = half(7);
    CHECK_FALSE(r.ok());
    CHECK(r.error() == toll::k_einval);
    CHECK(r.value_or(99) == 99);
    Result<long> zero = 0L; // 0 is a value here, never a failure
    CHECK(zero.ok());
}

TEST_CASE("Result: k_ok is no error, so it cannot make a failed Result")
{
    Result<int> r = toll::k_ok;
    CHECK_FALSE(r.ok());
    CHECK(r.error() != toll::k_ok);
}

TEST_CASE("Optional: nothing is told apart from every value, 0 and ~0 included")
{
    toll::Optional<unsigned long> none;
    CHECK_FALSE(none.has_value());
    CHECK_FALSE(static_cast<bool>(none));
    CHECK(none.value_or(7) == 7);
    toll::Optional<unsigned long> zero = 0UL;
    toll::Optional<unsigned long> all = ~0UL;
    REQUIRE(zero.has_value());
    REQUIRE(all.has_value());
    CHECK(zero.value() == 0);
    CHECK(all.value() == ~0UL);
    CHECK(all.value_or(7) == ~0UL);
}
