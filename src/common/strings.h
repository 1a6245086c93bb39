// String helpers for option lists and "did you mean" suggestions.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace plumb {

// "a,b,,c " -> {"a", "b", "c"}: splits on `sep`, trims spaces, drops empty items.
std::vector<std::string> split_list(std::string_view text, char sep = ',');

std::string join(std::span<const std::string> items, std::string_view sep);

// `text` without the spaces and tabs around it, nor a '\r' at its end (a CRLF line's).
std::string_view trim_blanks(std::string_view text);

// Levenshtein edit distance (insert, delete, substitute each cost 1).
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` when it is close enough to be a likely typo (distance at most
// max(1, word.size() / 3)); nothing otherwise.
std::optional<std::string> closest_match(std::string_view word,
                                         std::span<const std::string> candidates);

// " (did you mean 'x'?)" or "" -- ready to append to an error message.
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

// The one message for a name that is not in a table:
// "<what>: unknown <noun> '<word>' (did you mean 'x'?); expected one of a, b, c".
// `suggest_for` is the spelling to compare (a normalised form of `word`), when it differs.
std::string unknown_name(std::string_view what, std::string_view noun, std::string_view word,
                         std::span<const std::string> names, std::string_view suggest_for = {});

// Text from a file (a label, a host name, a line quoted in an error) made safe for a terminal:
// control characters (C0 but newline and tab when `keep_layout`, DEL, C1) and bytes that are not
// UTF-8 become visible escapes ("\x1b", "\n", "\u009b"), so an imported file cannot move the
// cursor, change colours or retitle the window of whoever lists it.
std::string terminal_safe(std::string_view text, bool keep_layout = false);

// `text` as text every database holds alike: each byte that does not start a valid UTF-8
// sequence, and each NUL, becomes U+FFFD (what nlohmann::json's replace handler writes for the
// JSON parts of a record). PostgreSQL refuses both, SQLite keeps them as given, libpq would cut
// the text at a NUL: a record must read back the same from either store.
std::string valid_utf8_text(std::string_view text);

// Characters of a bad line or row quoted in an error (then "...").
inline constexpr size_t kQuoteLimit = 120;

// `text` with ASCII letters in lower case.
std::string to_lower(std::string_view text);

// The length of `text` without a UTF-8 sequence cut off at its end (for text that arrives in
// pieces): the cut bytes wait for the next piece.
size_t complete_utf8_prefix(std::string_view text);

}  // namespace plumb
