// Parsing of the kernel command line: "key=value" words separated by spaces.
// Shared by the kernel and the host tests; it allocates nothing.
#pragma once
#include <stddef.h>

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

/// Matches @p text against the shell-style @p pattern ('*' and '?').
bool glob_match(const char* pattern, const char* text);

/// Same, for a @p text that is not NUL-terminated.
bool glob_match(const char* pattern, const char* text, size_t text_length);

} // namespace toll::lib
