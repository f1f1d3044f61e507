// Parsing of the kernel command line: "key=value" words separated by spaces.
// Shared by the kernel and the host tests; it allocates nothing.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace toll::lib {

/// One word of a command line, as views into the original string.
struct CmdlineWord {
    const char* key;
    size_t key_length;
    const char* value; ///< Empty (length 0) for a word without '='.
    size_t value_length;
};

/// Walks the words of a command line.
///
/// A value may be quoted with ' or " to hold spaces. The key `run` is special:
/// an unquoted `run=` value takes the rest of the line, so that
/// `run=/bin/echo hello world` passes the arguments through.
class CmdlineCursor {
  public:
    /// Starts before the first word of @p line, which is read in place
    /// (not copied) and must outlive the cursor.
    explicit CmdlineCursor(const char* line) : m_next(line) {}

    /// Stores the next word in @p word; returns false at the end of the line.
    bool next(CmdlineWord& word);

  private:
    const char* m_next;
};

/// Cuts the next program off a `run=` value that lists several, separated
/// by commas ("ut_pipe,lat_ctx -n 50 2 0"): returns the start of the next
/// one, NUL-terminated in place, and advances @p cursor past its comma (to
/// nullptr after the last). A comma inside quotes belongs to the program.
char* next_program(char*& cursor);

/// Splits @p text in place into at most @p max arguments, stored in @p argv,
/// and returns how many there were. Arguments are separated by spaces; ' or
/// " quote a stretch that holds spaces, and the quotes themselves are
/// removed, as a shell does: `sh -c "echo hi | cat"` gives three arguments.
/// Returns max + 1 if there were more than @p max; an unclosed quote runs to
/// the end of the text.
size_t split_arguments(char* text, const char** argv, size_t max);

/// Parses "ADDRESS,BYTES" (each decimal or 0x-hexadecimal) from the first
/// @p length characters of @p text, as a boot parameter that says where a
/// loader put something (arm64.ramdisk=, i386.ramdisk=). False if it is not
/// of that form or the numbers do not fit 64 bits.
bool parse_range(const char* text, size_t length, uint64_t& base, uint64_t& size);

/// Finds the word with key @p key in command line @p line and parses its
/// value with parse_range(). False if there is none or it does not parse;
/// @p found says whether there was one.
bool find_range(const char* line, const char* key, uint64_t& base, uint64_t& size, bool& found);

/// Matches @p text against the shell-style @p pattern ('*' and '?').
bool glob_match(const char* pattern, const char* text);

/// Same, for a @p text that is not NUL-terminated.
bool glob_match(const char* pattern, const char* text, size_t text_length);

} // namespace toll::lib
