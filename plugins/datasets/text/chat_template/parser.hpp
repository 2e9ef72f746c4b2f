// Parses a chat template into statements, refusing every construct the renderer does not support.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chat_template/ast.hpp"

namespace shardkit::chat {

/// The statements of `source` (normalized, see normalize_newlines). Throws ConfigError
/// "<name>:<line>:<column>: ..." for a syntax error, and "... <construct> is not supported by
/// shardkit's chat template renderer ..." for a statement, filter, test, method or syntax the renderer
/// lacks, wherever it is (a branch never taken included).
std::vector<Node> parse_template(std::string_view source, const std::string& name);

}  // namespace shardkit::chat
