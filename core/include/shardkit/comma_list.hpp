// The items of a list-valued option ("q_proj, v_proj" -> {"q_proj", "v_proj"}; "a:b" for paths), and
// lists joined back for messages.
#pragma once

#include <string>
#include <vector>

namespace shardkit {

/// `text` split at `separator`, each item trimmed of spaces and tabs, empty items dropped.
std::vector<std::string> split_list(const std::string& text, char separator);

/// `text` split at commas (split_list(text, ',')).
std::vector<std::string> comma_list(const std::string& text);

/// A list of class names as wrap_modules options take it: a JSON list ('["Block"]') or a comma
/// list ("Block, Other"); empty text gives none. A malformed JSON list throws ConfigError naming `flag`.
std::vector<std::string> class_name_list(const std::string& text, const std::string& flag);

/// `items` joined with `separator` between them ({"a", "b"}, ", " -> "a, b"; {} -> "").
std::string join_list(const std::vector<std::string>& items, const std::string& separator);

}  // namespace shardkit
