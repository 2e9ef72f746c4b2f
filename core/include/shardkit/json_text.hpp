// Writing JSON text by hand: exact numbers and escaped strings (metrics.jsonl, error files).
#pragma once

#include <string>

namespace shardkit {

/// The shortest decimal that reads back to the same double ("null" for NaN and infinities,
/// which JSON cannot hold).
std::string json_number(double value);

/// `text` escaped for a JSON string (quotes, backslashes, newlines; other controls as spaces).
std::string json_escape(const std::string& text);

}  // namespace shardkit
