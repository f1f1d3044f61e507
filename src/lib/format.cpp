// A small printf: enough conversions for the kernel's console and records.
#include "lib/format.h"

namespace toll::lib {
namespace {

struct Writer {
    FormatSink sink;
    void* context;
    size_t count = 0;

    void put(const char* bytes, size_t length)
    {
        if (length) {
            sink(context, bytes, length);
            count += length;
        }
    }
    void pad(char c, int n)
    {
        for (; n > 0; --n)
            put(&c, 1);
    }
};

// Writes the digits of @p value in @p base, honouring width and flags.
void put_number(Writer& w, uint64_t value, unsigned base, bool upper, bool negative, int width,
                bool zero_pad, bool left)
{
    char digits[24];
    int n = 0;
    const char* table = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        digits[n++] = table[value % base];
        value /= base;
    } while (value);
    int length = n + (negative ? 1 : 0);
    if (!left && !zero_pad)
        w.pad(' ', width - length);
    if (negative)
        w.put("-", 1);
    if (!left && zero_pad)
        w.pad('0', width - length);
    while (n)
        w.put(&digits[--n], 1);
    if (left)
        w.pad(' ', width - length);
}

} // namespace

size_t vformat(FormatSink sink, void* context, const char* fmt, va_list args)
{
    Writer w{sink, context};
    while (*fmt) {
        const char* start = fmt;
        while (*fmt && *fmt != '%')
            ++fmt;
        w.put(start, static_cast<size_t>(fmt - start));
        if (!*fmt)
            break;
        ++fmt; // the '%'
        bool zero_pad = false, left = false;
        for (;; ++fmt) {
            if (*fmt == '0')
                zero_pad = true;
            else if (*fmt == '-')
                left = true;
            else
                break;
        }
        int width = 0;
        if (*fmt == '*') {
            width = va_arg(args, int);
            ++fmt;
        }
        while (*fmt >= '0' && *fmt <= '9')
            width = width * 10 + (*fmt++ - '0');
        int precision = -1;
        if (*fmt == '.') {
            ++fmt;
            precision = 0;
            if (*fmt == '*') {
                precision = va_arg(args, int);
                ++fmt;
            }
            while (*fmt >= '0' && *fmt <= '9')
                precision = precision * 10 + (*fmt++ - '0');
        }
        int longs = 0;
        bool size_t_arg = false;
        while (*fmt == 'l') {
            ++longs;
            ++fmt;
        }
        if (*fmt == 'z') {
            size_t_arg = true;
            ++fmt;
        }
        char conv = *fmt ? *fmt++ : '\0';
        auto fetch_unsigned = [&]() -> uint64_t {
            if (longs >= 2)
                return va_arg(args, unsigned long long);
            if (longs == 1)
                return va_arg(args, unsigned long);
            if (size_t_arg)
                return va_arg(args, size_t);
            return va_arg(args, unsigned int);
        };
        switch (conv) {
        case 'd':
        case 'i': {
            int64_t v;
            if (longs >= 2)
                v = va_arg(args, long long);
            else if (longs == 1)
                v = va_arg(args, long);
            else if (size_t_arg)
                v = static_cast<int64_t>(va_arg(args, size_t));
            else
                v = va_arg(args, int);
            uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
            put_number(w, magnitude, 10, false, v < 0, width, zero_pad, left);
            break;
        }
        case 'u':
            put_number(w, fetch_unsigned(), 10, false, false, width, zero_pad, left);
            break;
        case 'x':
        case 'X':
            put_number(w, fetch_unsigned(), 16, conv == 'X', false, width, zero_pad, left);
            break;
        case 'o':
            put_number(w, fetch_unsigned(), 8, false, false, width, zero_pad, left);
            break;
        case 'p':
            w.put("0x", 2);
            put_number(w, reinterpret_cast<uintptr_t>(va_arg(args, void*)), 16, false, false,
                       sizeof(void*) * 2, true, false);
            break;
        case 'c': {
            char c = static_cast<char>(va_arg(args, int));
            if (!left)
                w.pad(' ', width - 1);
            w.put(&c, 1);
            if (left)
                w.pad(' ', width - 1);
            break;
        }
        case 's': {
            const char* s = va_arg(args, const char*);
            if (!s)
                s = "(null)";
            size_t n = 0;
            while (s[n] && (precision < 0 || n < static_cast<size_t>(precision)))
                ++n;
            if (!left)
                w.pad(' ', width - static_cast<int>(n));
            w.put(s, n);
            if (left)
                w.pad(' ', width - static_cast<int>(n));
            break;
        }
        case '%':
            w.put("%", 1);
            break;
        case '\0':
            break;
        default: // An unknown conversion is shown as written, so the mistake is visible.
            w.put("%", 1);
            w.put(&conv, 1);
            break;
        }
    }
    return w.count;
}

namespace {
struct BufferSink {
    char* buffer;
    size_t size;
    size_t used;
};

void buffer_sink(void* context, const char* bytes, size_t length)
{
    auto* b = static_cast<BufferSink*>(context);
    for (size_t i = 0; i < length; ++i, ++b->used)
        if (b->used + 1 < b->size)
            b->buffer[b->used] = bytes[i];
}
} // namespace

size_t vsnformat(char* buffer, size_t size, const char* fmt, va_list args)
{
    BufferSink b{buffer, size, 0};
    size_t n = vformat(buffer_sink, &b, fmt, args);
    if (size)
        buffer[b.used < size ? b.used : size - 1] = '\0';
    return n;
}

size_t snformat(char* buffer, size_t size, const char* fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    size_t n = vsnformat(buffer, size, fmt, args);
    va_end(args);
    return n;
}

} // namespace toll::lib
