// Port I/O and the few privileged instructions the i386 port needs, as inline
// functions so that the rest of the port reads as ordinary C++.
#pragma once
#include <stdint.h>

namespace toll::i386 {

inline void outb(uint16_t port, uint8_t value)
{
    asm volatile("outb %0, %1" : : "a"(value), "Nd"(port));
}

inline void outw(uint16_t port, uint16_t value)
{
    asm volatile("outw %0, %1" : : "a"(value), "Nd"(port));
}

inline uint8_t inb(uint16_t port)
{
    uint8_t value;
    asm volatile("inb %1, %0" : "=a"(value) : "Nd"(port));
    return value;
}

inline uint16_t inw(uint16_t port)
{
    uint16_t value;
    asm volatile("inw %1, %0" : "=a"(value) : "Nd"(port));
    return value;
}

inline void outl(uint16_t port, uint32_t value)
{
    asm volatile("outl %0, %1" : : "a"(value), "Nd"(port));
}

inline uint32_t inl(uint16_t port)
{
    uint32_t value;
    asm volatile("inl %1, %0" : "=a"(value) : "Nd"(port));
    return value;
}

/// Reads @p count 16-bit words from @p port into @p to (rep insw).
inline void insw(uint16_t port, void* to, uint32_t count)
{
    asm volatile("rep insw" : "+D"(to), "+c"(count) : "d"(port) : "memory");
}

/// Writes @p count 16-bit words from @p from to @p port (rep outsw).
inline void outsw(uint16_t port, const void* from, uint32_t count)
{
    asm volatile("rep outsw" : "+S"(from), "+c"(count) : "d"(port) : "memory");
}

inline uint64_t rdtsc()
{
    uint32_t lo, hi;
    asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (static_cast<uint64_t>(hi) << 32) | lo;
}

inline uint32_t read_eflags()
{
    uint32_t flags;
    asm volatile("pushfl; popl %0" : "=r"(flags));
    return flags;
}

/// EFLAGS.IF, Intel SDM Vol. 1, 3.4.3.
constexpr uint32_t k_eflags_if = 1u << 9;

} // namespace toll::i386
