// The items of a comma-separated option value ("q_proj, v_proj" -> {"q_proj", "v_proj"}).
#pragma once

#include <string>
#include <vector>

namespace shardkit {

/// `text` split at commas, each item trimmed of spaces and tabs, empty items dropped.
std::vector<std::string> comma_list(const std::string& text);

}  // namespace shardkit
