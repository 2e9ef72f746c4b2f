// Hugging Face chat templates (tokenizer_config.json's `chat_template`, Jinja) rendered byte for byte as
// transformers' apply_chat_template(tokenize=False) renders them, for the part of Jinja real templates use.
//
//   const auto tmpl = shardkit::chat::ChatTemplate::parse(config.at("chat_template").as_string().c_str(),
//                                                         "model/tokenizer_config.json chat_template");
//   shardkit::chat::RenderInput in;
//   in.messages = boost::json::parse(R"([{"role": "user", "content": "Hi"}])").as_array();
//   in.special_tokens = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
//   in.add_generation_prompt = true;
//   const std::string prompt = tmpl.render(in);
//   // With {% generation %} blocks: the assistant's text, for assistant-only loss.
//   const auto rendered = tmpl.render_with_spans(in);  // rendered.text, rendered.generation_spans
//
// The environment is transformers': trim_blocks and lstrip_blocks on, autoescape off, the sandbox's
// read-only lists and dicts, loop controls, the globals raise_exception() and strftime_now(), its
// `tojson` (json.dumps with ensure_ascii=False) and its {% generation %} extension. Whatever the
// renderer does not support is refused when the template is parsed, naming line and column, even in a
// branch a conversation never takes: it never renders a template differently from transformers.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace shardkit::chat {

struct Node;

/// The variables of one render, as apply_chat_template passes them to the template.
struct RenderInput {
  /// The conversation: message objects ({"role": ..., "content": ..., maybe "tool_calls": ...}).
  boost::json::array messages;
  /// End with the header of an assistant turn, for the model to answer next. Default false.
  bool add_generation_prompt = false;
  /// The tokenizer's special_tokens_map (bos_token, eos_token, pad_token, unk_token...). Leave out a
  /// token the tokenizer lacks: transformers leaves it out too, and the template sees it undefined.
  std::map<std::string, std::string> special_tokens;
  /// `tools` and `documents`; null (default) is the None transformers passes when there are none.
  boost::json::value tools;
  boost::json::value documents;
  /// More variables (apply_chat_template's extra keyword arguments, e.g. enable_thinking). Default none.
  boost::json::object extra;
  /// The local time strftime_now() formats. Default: the time of the render.
  std::optional<std::tm> now;
};

/// A byte range [begin, end) of a rendered text.
struct ByteSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
};

/// A render's text, and where the output of each {% generation %} block lies in it: transformers'
/// return_assistant_tokens_mask spans, in bytes of the UTF-8 text (transformers counts characters).
struct Rendered {
  std::string text;
  std::vector<ByteSpan> generation_spans;
};

/// A parsed chat template: parse once, render many times. Rendering is const and thread-safe.
class ChatTemplate {
 public:
  /// Parses `source`; `name` names it in every error, "<name>:<line>:<column>: ...". Throws ConfigError
  /// for a syntax error, and "<name>:<line>:<column>: <construct> is not supported by shardkit's chat
  /// template renderer; ..." for what the renderer lacks (see the file comment).
  static ChatTemplate parse(std::string source, std::string name);

  /// The rendered text. Throws ConfigError "<name>:<line>: ..." when the template raises
  /// (raise_exception: "the template raised an error: <its message>") or an expression fails as it
  /// would in Python (str + int, an attribute of an undefined value...).
  std::string render(const RenderInput& input) const;
  /// The rendered text and the byte spans of its {% generation %} output.
  Rendered render_with_spans(const RenderInput& input) const;
  /// Whether the template has {% generation %} blocks (assistant-only loss needs them).
  bool has_generation_blocks() const { return has_generation_; }
  /// The name given to parse().
  const std::string& name() const { return name_; }

 private:
  ChatTemplate() = default;

  std::string name_;
  std::shared_ptr<const std::vector<Node>> body_;
  bool has_generation_ = false;
};

}  // namespace shardkit::chat
