// Parsing a chat template once and rendering conversations with it (see chat_template.hpp).
#include "chat_template/chat_template.hpp"

#include <algorithm>

#include "chat_template/errors.hpp"
#include "chat_template/lexer.hpp"
#include "chat_template/parser.hpp"
#include "chat_template/render.hpp"
#include "chat_template/text.hpp"
#include "shardkit/error.hpp"

namespace shardkit::chat {
namespace {

bool has_generation(const std::vector<Node>& body) {
  return std::any_of(body.begin(), body.end(), [](const Node& n) {
    return n.kind == Node::Kind::Generation || has_generation(n.body) || has_generation(n.orelse);
  });
}

std::tm local_now() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  return local;
}

}  // namespace

ChatTemplate ChatTemplate::parse(std::string source, std::string name) {
  try {
    decode_utf8(source);
  } catch (const EvalError& e) {
    throw ConfigError(name + ": the chat template is not valid UTF-8 (" + e.what() + ")");
  }
  auto body = parse_template(normalize_newlines(source), name);
  ChatTemplate t;
  t.has_generation_ = has_generation(body);
  t.body_ = std::make_shared<const std::vector<Node>>(std::move(body));
  t.name_ = std::move(name);
  return t;
}

Rendered ChatTemplate::render_with_spans(const RenderInput& input) const {
  Dict context;
  for (const auto& [key, token] : input.special_tokens) context.set(key, Value(token));
  try {
    for (const auto& entry : input.extra) context.set(std::string(entry.key()), from_json(entry.value()));
    List messages;
    messages.reserve(input.messages.size());
    for (const auto& message : input.messages) messages.push_back(from_json(message));
    context.set("messages", Value(std::move(messages)));
    context.set("tools", from_json(input.tools));
    context.set("documents", from_json(input.documents));
  } catch (const EvalError& e) {
    throw ConfigError(name_ + ": the conversation cannot be passed to the template: " + e.what());
  }
  context.set("add_generation_prompt", Value(input.add_generation_prompt));
  Rendered out;
  render_template(*body_, name_, std::move(context), input.now ? *input.now : local_now(), out.text,
                  out.generation_spans);
  return out;
}

std::string ChatTemplate::render(const RenderInput& input) const { return render_with_spans(input).text; }

}  // namespace shardkit::chat
