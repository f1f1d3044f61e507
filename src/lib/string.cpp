// The C memory and string functions. memcpy and memset move a machine word at
// a time when the pointers allow it (fork copies whole pages with memcpy, so
// this is on the measured paths); the rest go byte by byte. In the kernel
// the two are weak: an arch may define faster ones (src/arch/i386/string.S).
#include "lib/string.h"

#ifdef TOLL_HOST_TEST
#define TOLL_ARCH_MAY_REPLACE
#else
#define TOLL_ARCH_MAY_REPLACE __attribute__((weak))
#endif

extern "C" {

typedef size_t __attribute__((may_alias)) Word;

TOLL_ARCH_MAY_REPLACE void* TOLL_C_NAME(memcpy)(void* dst, const void* src, size_t n)
{
    auto* d = static_cast<unsigned char*>(dst);
    auto* s = static_cast<const unsigned char*>(src);
    if (((reinterpret_cast<size_t>(d) | reinterpret_cast<size_t>(s)) & (sizeof(Word) - 1)) == 0) {
        for (; n >= 4 * sizeof(Word); n -= 4 * sizeof(Word)) {
            auto* dw = reinterpret_cast<Word*>(d);
            auto* sw = reinterpret_cast<const Word*>(s);
            dw[0] = sw[0];
            dw[1] = sw[1];
            dw[2] = sw[2];
            dw[3] = sw[3];
            d += 4 * sizeof(Word);
            s += 4 * sizeof(Word);
        }
    }
    while (n--)
        *d++ = *s++;
    return dst;
}

void* TOLL_C_NAME(memmove)(void* dst, const void* src, size_t n)
{
    auto* d = static_cast<unsigned char*>(dst);
    auto* s = static_cast<const unsigned char*>(src);
    if (d < s) {
        while (n--)
            *d++ = *s++;
    } else {
        while (n--)
            d[n] = s[n];
    }
    return dst;
}

TOLL_ARCH_MAY_REPLACE void* TOLL_C_NAME(memset)(void* dst, int value, size_t n)
{
    auto* d = static_cast<unsigned char*>(dst);
    if ((reinterpret_cast<size_t>(d) & (sizeof(Word) - 1)) == 0) {
        Word w = static_cast<unsigned char>(value);
        w |= w << 8;
        w |= w << 16;
        if (sizeof(Word) > 4)
            w |= w << (sizeof(Word) > 4 ? 32 : 0);
        for (; n >= 4 * sizeof(Word); n -= 4 * sizeof(Word)) {
            auto* dw = reinterpret_cast<Word*>(d);
            dw[0] = dw[1] = dw[2] = dw[3] = w;
            d += 4 * sizeof(Word);
        }
    }
    while (n--)
        *d++ = static_cast<unsigned char>(value);
    return dst;
}

int TOLL_C_NAME(memcmp)(const void* a, const void* b, size_t n)
{
    auto* x = static_cast<const unsigned char*>(a);
    auto* y = static_cast<const unsigned char*>(b);
    for (; n; --n, ++x, ++y)
        if (*x != *y)
            return *x < *y ? -1 : 1;
    return 0;
}

size_t TOLL_C_NAME(strlen)(const char* s)
{
    size_t n = 0;
    while (s[n])
        ++n;
    return n;
}

size_t TOLL_C_NAME(strnlen)(const char* s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        ++n;
    return n;
}

int TOLL_C_NAME(strcmp)(const char* a, const char* b)
{
    while (*a && *a == *b)
        ++a, ++b;
    return static_cast<unsigned char>(*a) - static_cast<unsigned char>(*b);
}

int TOLL_C_NAME(strncmp)(const char* a, const char* b, size_t n)
{
    for (; n; --n, ++a, ++b) {
        if (*a != *b)
            return static_cast<unsigned char>(*a) - static_cast<unsigned char>(*b);
        if (!*a)
            return 0;
    }
    return 0;
}

const char* TOLL_C_NAME(strchr)(const char* s, int c)
{
    for (;; ++s) {
        if (*s == static_cast<char>(c))
            return s;
        if (!*s)
            return nullptr;
    }
}
}
