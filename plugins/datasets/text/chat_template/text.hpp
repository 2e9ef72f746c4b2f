// Text as Python's str sees it: code points, whitespace, strip and split, case changes, replace and repr().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardkit::chat {

/// The code points of UTF-8 `s`; EvalError at a malformed sequence.
std::u32string decode_utf8(std::string_view s);
/// `s` as UTF-8.
std::string encode_utf8(std::u32string_view s);
/// Python's len() of a str: its number of code points (`s` is valid UTF-8).
std::size_t code_point_count(std::string_view s);
/// Python's str.isspace() for one code point (also what `\s` matches in Jinja's lexer).
bool is_space(char32_t c);

/// Python's strip(), lstrip() (`right` false) or rstrip() (`left` false): of whitespace, or of the
/// code points in `chars` when it is not null.
std::string strip(std::string_view s, const std::string* chars, bool left, bool right);
/// Python's str.split() or rsplit(): on `sep`, or on runs of whitespace when `sep` is null; at most
/// `maxsplit` splits when it is not negative.
std::vector<std::string> split(std::string_view s, const std::string* sep, std::int64_t maxsplit, bool from_right);
/// Python's str.replace(): the first `count` occurrences of `from` (all when negative).
std::string replace(std::string_view s, std::string_view from, std::string_view to, std::int64_t count);

/// Case changes: Python's upper(), lower(), capitalize() and title(), and Jinja's `title` filter (which
/// starts a word after '-', whitespace or an opening bracket, where Python's starts one after any
/// character that is not a letter).
enum class Case { Upper, Lower, Capitalize, PythonTitle, JinjaTitle };
/// `s` with its case changed. Only ASCII letters are mapped: a string holding a letter of another
/// script with case (é, Greek, Cyrillic...) is an EvalError rather than a result Python would not give.
std::string change_case(std::string_view s, Case c);

/// Python's repr() of a str: quoted, with escapes. Which non-ASCII characters Python counts as
/// unprintable (escaped) is approximated by the common ones (controls, spaces other than ' ', format
/// characters, private use).
std::string repr_string(std::string_view s);

}  // namespace shardkit::chat
