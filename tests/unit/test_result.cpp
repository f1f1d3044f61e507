// Host tests of Result<T> (kernel/kern/result.h): a value or an Errno, never
// both, and never a success that carries an error.
#include "host_kernel_stubs.h"
#include "kernel/kern/result.h"
#include <catch2/catch.hpp>
#include <stddef.h>
#include <type_traits>

using toll::Errno;
using toll::Result;

namespace {

Result<size_t> half(size_t n)
{
    if (n % 2)
        return toll::k_einval;
    return n / 2;
}

// An owner that cannot be copied, as FileRef: counts the live ones so that a
// test sees a Result neither leak nor double-drop it.
struct Owner {
    static inline int live = 0;
    int id;
    explicit Owner(int i) : id(i) { ++live; }
    Owner(const Owner&) = delete;
    Owner(Owner&& other) : id(other.id) { other.id = 0, ++live; }
    ~Owner() { --live; }
};

Result<Owner> make_owner(int id)
{
    if (id < 0)
        return toll::k_enomem;
    return Owner{id};
}

Result<int> owner_id_plus_one(int id)
{
    Owner o = TRY(make_owner(id));
    return o.id + 1;
}

Errno check_even(size_t n)
{
    TRY(half(n));
    return toll::k_ok;
}

} // namespace

// A system call's -errno and an Errno are no numbers a Result or an int can
// take by accident: each line below would compile with an unscoped Errno.
static_assert(!std::is_convertible_v<Errno, int>);
static_assert(!std::is_constructible_v<Result<int>, decltype(-toll::k_emfile)>);
static_assert(!std::is_constructible_v<Result<long>, decltype(-toll::k_emfile)>);
static_assert(!std::is_constructible_v<toll::Optional<int>, decltype(-toll::k_emfile)>);
static_assert(std::is_convertible_v<decltype(-toll::k_emfile), long>); // a syscall's return

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

TEST_CASE("Result: k_ok is no error, so building a failure from it panics")
{
    CHECK_THROWS_AS(Result<int>(toll::k_ok), toll::test::KernelPanic);
    CHECK(-toll::k_emfile == -24L);
}

TEST_CASE("Result: reading the value of a failure panics")
{
    Result<size_t> r = half(7);
    CHECK_THROWS_AS(r.value(), toll::test::KernelPanic);
    CHECK_THROWS_AS(r.release_value(), toll::test::KernelPanic);
}

TEST_CASE("Result: a move-only value passes through and is released once")
{
    Owner::live = 0;
    {
        Result<Owner> r = make_owner(5);
        REQUIRE(r.ok());
        CHECK(Owner::live == 1);
        Result<Owner> moved = toll::move(r);
        Owner o = moved.release_value();
        CHECK(o.id == 5);
        CHECK(moved.value().id == 0); // moved from
        CHECK(make_owner(-1).error() == toll::k_enomem);
    }
    CHECK(Owner::live == 0);
}

TEST_CASE("TRY passes a failure on and yields the value of a success")
{
    Result<int> good = owner_id_plus_one(41);
    REQUIRE(good.ok());
    CHECK(good.value() == 42);
    CHECK(owner_id_plus_one(-1).error() == toll::k_enomem);
    CHECK(check_even(4) == toll::k_ok);
    CHECK(check_even(5) == toll::k_einval);
    CHECK(Owner::live == 0);
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
