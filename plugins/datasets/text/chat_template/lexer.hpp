// Splits a chat template into text and the tokens of its tags, with Jinja's whitespace control as
// transformers configures it (trim_blocks and lstrip_blocks on).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardkit::chat {

enum class TokenType : std::uint8_t {
  Text, VariableBegin, VariableEnd, BlockBegin, BlockEnd, Name, String, Integer, Float, Operator, End
};

/// One token and where it starts.
struct Token {
  TokenType type = TokenType::End;
  std::string text;  ///< Text's output, a name, a string literal's value, an operator's spelling
  int line = 1;
  int column = 1;  ///< 1-based, in characters (code points)
  std::int64_t integer = 0;
  double number = 0;
};

/// Jinja's preparation of a source: "\r\n" and "\r" become "\n", and one final "\n" is dropped.
std::string normalize_newlines(std::string_view source);

/// The tokens of `source` (normalized), ending with End. Comments are dropped; whitespace control
/// ('-' and '+' modifiers, trim_blocks, lstrip_blocks) is applied to the Text tokens. Throws
/// ConfigError "<name>:<line>:<column>: ..." for a malformed tag or literal and for `{% raw %}`.
std::vector<Token> tokenize(std::string_view source, const std::string& name);

}  // namespace shardkit::chat
