// Kernel command-line parameters. Each subsystem declares the keys it reads
// with TOLL_PARAM; a word whose key nobody declared is reported at boot.
#pragma once
#include "kernel/kern/section.h"
#include <stddef.h>

namespace toll {

/// A declared command-line key and a line of help for the unknown-key message.
struct KernelParam {
    const char* key;
    const char* help;
};

/// Declares that the kernel understands @p key (a string literal).
#define TOLL_PARAM(ident, key, help)                                                               \
    TOLL_IN_SECTION(toll_params) constinit const ::toll::KernelParam ident                         \
    {                                                                                              \
        key, help                                                                                  \
    }

/// Remembers the boot command line. Called once, early.
void param_init(const char* cmdline);

/// The whole command line as booted.
const char* param_cmdline();

/// Finds @p key on the command line. Copies its value (NUL-terminated) into
/// @p out and returns true; returns false when the key is absent.
bool param_get(const char* key, char* out, size_t out_size);

/// Returns the value of @p key parsed as an unsigned number, or @p fallback.
unsigned long param_get_ulong(const char* key, unsigned long fallback);

/// Returns the index in @p names of @p key's value, or @p fallback when the
/// key is absent. A value that is none of @p names is reported on the console
/// ("warning: vm.split=5/5 is not one of 3/1 3/1-pti 4/4: using 4/4") and
/// gives @p fallback too, so a mistyped choice is never silently ignored.
size_t param_get_choice(const char* key, const char* const* names, size_t count, size_t fallback);

/// param_get_choice for an array of names.
template <size_t N>
size_t param_get_choice(const char* key, const char* const (&names)[N], size_t fallback)
{
    return param_get_choice(key, names, N, fallback);
}

/// Returns true if @p key is on the command line (with any value).
bool param_present(const char* key);

/// Warns on the console about every word of @p cmdline whose key is not
/// declared, and returns how many there were.
unsigned param_report_unknown(const char* cmdline);

} // namespace toll
