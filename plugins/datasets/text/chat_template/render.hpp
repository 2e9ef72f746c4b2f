// Runs a parsed chat template: its statements and expressions, Jinja's scopes, and transformers' globals.
#pragma once

#include <ctime>
#include <string>
#include <vector>

#include "chat_template/ast.hpp"
#include "chat_template/chat_template.hpp"

namespace shardkit::chat {

/// Renders `body`, the template `name`, with the variables in `context` into `out`, and appends the
/// byte span of each {% generation %} block's output to `spans`. strftime_now() formats `now`. Throws
/// ConfigError "<name>:<line>: ..." when the template raises or an expression fails.
void render_template(const std::vector<Node>& body, const std::string& name, Dict context, const std::tm& now,
                     std::string& out, std::vector<ByteSpan>& spans);

}  // namespace shardkit::chat
