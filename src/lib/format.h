// printf-style formatting into any byte sink, without a C library. Used by the
// kernel console and tested on the host.
#pragma once
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

namespace toll::lib {

/// A destination for formatted bytes: called once per output chunk.
using FormatSink = void (*)(void* context, const char* bytes, size_t length);

/// Formats @p fmt with @p args into @p sink.
///
/// Understands %d %i %u %x %X %o %c %s %p %% with the length modifiers l, ll
/// and z, a field width, the flags '0' and '-', and a precision for %s; width and
/// precision may be '*'.
/// Returns the number of bytes produced.
size_t vformat(FormatSink sink, void* context, const char* fmt, va_list args);

/// Formats into @p buffer of @p size bytes, always NUL-terminating when size > 0.
/// Returns the length the whole output would have had (as snprintf does).
size_t snformat(char* buffer, size_t size, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

/// va_list form of snformat.
size_t vsnformat(char* buffer, size_t size, const char* fmt, va_list args);

} // namespace toll::lib
