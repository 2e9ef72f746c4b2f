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

/// `items` joined with `separator` between them ({"a", "b"}, ", " -> "a, b"; {} -> "").
std::string join_list(const std::vector<std::string>& items, const std::string& separator);

}  // namespace shardkit
