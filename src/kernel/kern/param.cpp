// The command line: lookups by key, and the check for keys nobody declared.
#include "kernel/kern/param.h"
#include "kernel/kern/console.h"
#include "lib/cmdline.h"
#include "lib/string.h"

TOLL_SECTION_BOUNDS(const toll::KernelParam, toll_params);

namespace toll {
namespace {
const char* g_cmdline = "";

bool key_is(const lib::CmdlineWord& w, const char* key)
{
    return strlen(key) == w.key_length && memcmp(key, w.key, w.key_length) == 0;
}

bool find(const char* key, lib::CmdlineWord& found)
{
    bool seen = false;
    lib::CmdlineCursor cursor(g_cmdline);
    lib::CmdlineWord w;
    while (cursor.next(w)) // The last occurrence wins, as on Linux.
        if (key_is(w, key)) {
            found = w;
            seen = true;
        }
    return seen;
}
} // namespace

TOLL_PARAM(param_test, "test", "run the in-kernel tests whose names match this glob");
TOLL_PARAM(param_nonce, "nonce", "tag every protocol record with this per-run nonce");

void param_init(const char* cmdline)
{
    g_cmdline = cmdline ? cmdline : "";
}

const char* param_cmdline()
{
    return g_cmdline;
}

bool param_get(const char* key, char* out, size_t out_size)
{
    lib::CmdlineWord w;
    if (!find(key, w))
        return false;
    size_t n = w.value_length < out_size - 1 ? w.value_length : out_size - 1;
    memcpy(out, w.value, n);
    out[n] = '\0';
    return true;
}

unsigned long param_get_ulong(const char* key, unsigned long fallback)
{
    char buf[24];
    if (!param_get(key, buf, sizeof buf) || !buf[0])
        return fallback;
    unsigned long v = 0;
    unsigned base = 10;
    const char* p = buf;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    for (; *p; ++p) {
        unsigned d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (base == 16 && *p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else if (base == 16 && *p >= 'A' && *p <= 'F')
            d = *p - 'A' + 10;
        else {
            kprintf("warning: %s=%s is not a number; using %lu\n", key, buf, fallback);
            return fallback;
        }
        v = v * base + d;
    }
    return v;
}

size_t param_get_choice(const char* key, const char* const* names, size_t count, size_t fallback)
{
    char value[24];
    if (!param_get(key, value, sizeof value))
        return fallback;
    for (size_t i = 0; i < count; ++i)
        if (strcmp(value, names[i]) == 0)
            return i;
    kprintf("warning: %s=%s is not one of", key, value);
    for (size_t i = 0; i < count; ++i)
        kprintf(" %s", names[i]);
    kprintf(": using %s\n", names[fallback]);
    return fallback;
}

bool param_present(const char* key)
{
    lib::CmdlineWord w;
    return find(key, w);
}

unsigned param_report_unknown(const char* cmdline)
{
    unsigned unknown = 0;
    lib::CmdlineCursor cursor(cmdline);
    lib::CmdlineWord w;
    while (cursor.next(w)) {
        bool known = false;
        for (const KernelParam* p = __start_toll_params; p < __stop_toll_params; ++p)
            if (key_is(w, p->key))
                known = true;
        if (!known) {
            kprintf("warning: unknown command-line key '%.*s' ignored; known keys:",
                    (int)w.key_length, w.key);
            for (const KernelParam* p = __start_toll_params; p < __stop_toll_params; ++p)
                kprintf(" %s", p->key);
            kprintf("\n");
            ++unknown;
        }
    }
    return unknown;
}

} // namespace toll
