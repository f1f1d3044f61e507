// Command-line words and glob patterns (used by test=<glob>).
#include "lib/cmdline.h"

namespace toll::lib {

bool CmdlineCursor::next(CmdlineWord& word)
{
    const char* p = m_next;
    while (*p == ' ' || *p == '\t' || *p == '\n')
        ++p;
    if (!*p) {
        m_next = p;
        return false;
    }
    word.key = p;
    while (*p && *p != '=' && *p != ' ' && *p != '\t' && *p != '\n')
        ++p;
    word.key_length = static_cast<size_t>(p - word.key);
    word.value = p;
    word.value_length = 0;
    if (*p == '=') {
        ++p;
        if (*p == '\'' || *p == '"') {
            char quote = *p++;
            word.value = p;
            while (*p && *p != quote)
                ++p;
            word.value_length = static_cast<size_t>(p - word.value);
            if (*p)
                ++p;
        } else {
            bool rest_of_line = word.key_length == 3 && word.key[0] == 'r' && word.key[1] == 'u' &&
                                word.key[2] == 'n';
            word.value = p;
            while (*p && *p != '\n' && (rest_of_line || (*p != ' ' && *p != '\t')))
                ++p;
            word.value_length = static_cast<size_t>(p - word.value);
            while (rest_of_line && word.value_length &&
                   (word.value[word.value_length - 1] == ' ' ||
                    word.value[word.value_length - 1] == '\t'))
                --word.value_length;
        }
    }
    m_next = p;
    return true;
}

bool glob_match(const char* pattern, const char* text, size_t length)
{
    // Iterative matching with one backtrack point for the last '*'.
    size_t t = 0;
    const char* star = nullptr;
    size_t star_text = 0;
    while (t < length) {
        if (*pattern == '*') {
            star = pattern++;
            star_text = t;
        } else if (*pattern && (*pattern == '?' || *pattern == text[t])) {
            ++pattern;
            ++t;
        } else if (star) {
            pattern = star + 1;
            t = ++star_text;
        } else {
            return false;
        }
    }
    while (*pattern == '*')
        ++pattern;
    return !*pattern;
}

char* next_program(char*& cursor)
{
    char* start = cursor;
    if (!start)
        return nullptr;
    char quote = 0;
    char* p = start;
    for (; *p; ++p) {
        if (quote) {
            if (*p == quote)
                quote = 0;
        } else if (*p == '\'' || *p == '"') {
            quote = *p;
        } else if (*p == ',') {
            break;
        }
    }
    if (*p == ',') {
        *p = '\0';
        cursor = p + 1;
    } else {
        cursor = nullptr;
    }
    return start;
}

size_t split_arguments(char* text, const char** argv, size_t max)
{
    // LAB demo BEGIN: split text in place at spaces into argv; a ' or " stretch holds spaces
    // LAB demo HINT: the quotes themselves are removed, so copy each word over itself
    size_t argc = 0;
    char* in = text;
    while (*in) {
        while (*in == ' ')
            ++in;
        if (!*in)
            break;
        if (argc == max)
            return max + 1;
        // Copy the argument over itself without its quotes; the output never
        // runs ahead of the input, so one buffer serves both.
        char* out = in;
        argv[argc++] = out;
        char quote = 0;
        for (; *in && (quote || *in != ' '); ++in) {
            if (quote && *in == quote)
                quote = 0;
            else if (!quote && (*in == '\'' || *in == '"'))
                quote = *in;
            else
                *out++ = *in;
        }
        bool more = *in == ' ';
        if (more)
            ++in;
        *out = '\0';
        if (!more)
            break;
    }
    return argc;
    // LAB demo STUB
    // (void)text, (void)argv, (void)max;
    // return 0;
    // LAB demo END
}

bool glob_match(const char* pattern, const char* text)
{
    size_t n = 0;
    while (text[n])
        ++n;
    return glob_match(pattern, text, n);
}

namespace {

// An unsigned number, decimal or 0x-hexadecimal, of exactly @p length
// characters; false if it is not one or does not fit 64 bits.
bool parse_number(const char* text, size_t length, uint64_t& value)
{
    unsigned base = 10;
    if (length > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
        base = 16, text += 2, length -= 2;
    value = 0;
    for (size_t i = 0; i < length; ++i) {
        char c = text[i];
        unsigned digit = c >= '0' && c <= '9'   ? unsigned(c - '0')
                         : c >= 'a' && c <= 'f' ? unsigned(c - 'a' + 10)
                         : c >= 'A' && c <= 'F' ? unsigned(c - 'A' + 10)
                                                : 99;
        if (digit >= base || value > (UINT64_MAX - digit) / base)
            return false;
        value = value * base + digit;
    }
    return length > 0;
}

} // namespace

bool parse_range(const char* text, size_t length, uint64_t& base, uint64_t& size)
{
    size_t comma = 0;
    while (comma < length && text[comma] != ',')
        ++comma;
    return comma < length && parse_number(text, comma, base) &&
           parse_number(text + comma + 1, length - comma - 1, size);
}

bool find_range(const char* line, const char* key, uint64_t& base, uint64_t& size, bool& found)
{
    found = false;
    size_t key_length = 0;
    while (key[key_length])
        ++key_length;
    CmdlineCursor cursor(line);
    CmdlineWord w;
    while (cursor.next(w)) {
        if (w.key_length != key_length)
            continue;
        bool same = true;
        for (size_t i = 0; i < key_length && same; ++i)
            same = w.key[i] == key[i];
        if (same) {
            found = true;
            return parse_range(w.value, w.value_length, base, size);
        }
    }
    return false;
}

} // namespace toll::lib
