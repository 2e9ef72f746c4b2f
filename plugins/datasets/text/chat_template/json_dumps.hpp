// Python's json.dumps of a template value, as transformers' `tojson` filter calls it.
#pragma once

#include <optional>
#include <string>

#include "chat_template/value.hpp"

namespace shardkit::chat {

/// json.dumps' options; the defaults are transformers' `tojson` without arguments.
struct JsonFormat {
  std::optional<std::string> indent;  ///< the indent of one level; unset (default): all on one line
  std::string item_separator = ", ";  ///< json.dumps uses "," when an indent is set
  std::string key_separator = ": ";
  bool ensure_ascii = false;  ///< escape non-ASCII characters as \uXXXX; default off
  bool sort_keys = false;     ///< default: insertion order
};

/// `v` as JSON text, byte for byte as json.dumps writes it. EvalError for a value JSON has no form
/// for (undefined, a namespace, a macro).
std::string json_dumps(const Value& v, const JsonFormat& format);

}  // namespace shardkit::chat
