// Choosing the chat template, rendering a conversation, tokenizing it, and marking its trained tokens.
#include "chat_format.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>

#include "shardkit/error.hpp"
#include "shardkit/files.hpp"
#include "template_tokens.hpp"
#include "tokenizer/tokenizer.hpp"

namespace shardkit::text {
namespace fs = std::filesystem;
namespace {

// AITraining's fallback for a tokenizer without a template (DEFAULT_CHAT_TEMPLATE).
constexpr const char* kFallback =
    "{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{% for message in "
    "messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% "
    "if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

// tokenizer_config.json's special tokens, as the strings a template sees.
std::map<std::string, std::string> config_special_tokens(const boost::json::object& config) {
  std::map<std::string, std::string> tokens;
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    const auto* v = config.if_contains(key);
    if (!v) continue;
    if (v->is_string()) tokens[key] = std::string(v->as_string());
    else if (v->is_object() && v->as_object().contains("content") && v->as_object().at("content").is_string())
      tokens[key] = std::string(v->as_object().at("content").as_string());
  }
  return tokens;
}

// The template in tokenizer_config.json's chat_template: a string, or a list of {name, template}
// of which "default" is the one apply_chat_template uses.
std::optional<std::string> config_template(const boost::json::object& config, const std::string& path) {
  const auto* v = config.if_contains("chat_template");
  if (!v || v->is_null()) return std::nullopt;
  if (v->is_string()) return std::string(v->as_string());
  if (v->is_array())
    for (const auto& entry : v->as_array())
      if (entry.is_object() && entry.as_object().contains("name") && entry.as_object().at("name") == "default" &&
          entry.as_object().contains("template") && entry.as_object().at("template").is_string())
        return std::string(entry.as_object().at("template").as_string());
  throw ConfigError(path + ": chat_template is neither a string nor a list holding a template named \"default\"");
}

// Why `messages` cannot be rendered, or "" when it can.
std::string message_problem(const boost::json::value& messages) {
  if (messages.is_string())
    return "messages is a string that is neither JSON nor a Python literal: a conversation is a list of {\"role\": "
           "..., \"content\": ...} objects";
  if (!messages.is_array()) return "messages is not a list of {\"role\": ..., \"content\": ...} objects";
  if (messages.as_array().empty()) return "the messages list is empty";
  std::size_t i = 0;
  for (const auto& m : messages.as_array()) {
    const auto at = "message " + std::to_string(i++);
    if (!m.is_object()) return at + " is not an object with a role and a content";
    const auto* role = m.as_object().if_contains("role");
    if (!role || !role->is_string()) return at + " has no string 'role'";
    const auto* content = m.as_object().if_contains("content");
    const bool tool_call = m.as_object().contains("tool_calls");
    if (!(content && content->is_string()) && !(tool_call && (!content || content->is_null())))
      return at + " (role '" + std::string(role->as_string()) + "') has no string 'content'";
  }
  return "";
}

// The messages as apply_chat_template passes them: keys whose value is None are left out.
boost::json::array without_nulls(const boost::json::array& messages) {
  boost::json::array out;
  for (const auto& m : messages) {
    boost::json::object o;
    for (const auto& [key, value] : m.as_object())
      if (!value.is_null()) o[key] = value;
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace

bool has_label(const std::uint8_t* trained, std::size_t n) {
  return n > 0 && (!trained || std::find(trained, trained + n, 1) != trained + n);
}

std::string_view aitraining_template(std::string_view name) {
  if (name == "chatml" || name == "zephyr") return template_tokens(name).source;
  if (name == "fallback") return kFallback;
  return {};
}

ChatFormat ChatFormat::load(const std::string& chat_template, const std::string& tokenizer_file,
                            std::shared_ptr<const Tokenizer> tokenizer, bool response_only_loss) {
  const auto folder = fs::path(tokenizer_file).parent_path();
  const auto config_path = (folder / "tokenizer_config.json").string();
  const auto config = read_tokenizer_config(config_path);
  ChatFormat f;
  f.tokenizer_ = std::move(tokenizer);
  f.response_only_ = response_only_loss;
  f.special_tokens_ = config_special_tokens(config);
  std::string source, name;
  std::error_code ec;
  if (chat_template == "tokenizer") {
    const auto jinja = (folder / "chat_template.jinja").string();
    if (fs::is_regular_file(jinja, ec)) {
      source = read_text_file(jinja);
      name = jinja;
    } else if (auto from_config = config_template(config, config_path)) {
      source = std::move(*from_config);
      name = config_path + " chat_template";
    } else {
      source = kFallback;
      name = "AITraining's ChatML fallback (" + folder.string() + " has no chat template)";
    }
  } else if (chat_template == "chatml" || chat_template == "zephyr") {
    const auto b = template_tokens(chat_template);
    std::string missing;  // add_template_tokens() gives a tokenizer them
    for (const auto& token : b.additional)
      if (!f.tokenizer_->token_to_id(token)) missing += std::string(missing.empty() ? "" : " ") + token;
    if (!missing.empty())
      throw RuntimeError("--dataset.chat_template=" + chat_template + ": the tokenizer lacks " + missing +
                         " (add_template_tokens() adds them)");
    source = std::string(b.source);
    name = "AITraining's " + chat_template + " template";
    for (const auto& [key, value] : b.special) f.special_tokens_[key] = value;
  } else {
    if (!fs::is_regular_file(chat_template, ec))
      throw ConfigError("--dataset.chat_template=" + chat_template +
                        ": not tokenizer, chatml, zephyr or none, and no such .jinja file");
    source = read_text_file(chat_template);
    name = chat_template;
  }
  f.template_ = std::make_shared<const chat::ChatTemplate>(chat::ChatTemplate::parse(std::move(source), name));
  f.description_ = name;
  if (!response_only_loss) {
    f.description_ += "; the loss covers every token (--dataset.response_only_loss=false)";
  } else if (f.template_->has_generation_blocks()) {
    f.description_ += "; the loss covers the assistant's {% generation %} blocks";
  } else {
    f.markers_ = find_response_markers(*f.template_, f.special_tokens_, *f.tokenizer_);
    if (!f.markers_)
      throw ConfigError(name + " has no {% generation %} blocks and none of the response markers shardkit knows "
                        "(<start_of_turn>model, <|start_header_id|>assistant<|end_header_id|>, <|im_start|>assistant, "
                        "[/INST], <|assistant|>), so the assistant's tokens cannot be told apart: give "
                        "--dataset.response_only_loss=false to train on every token, or a template with "
                        "{% generation %} blocks (--dataset.chat_template=<file.jinja>)");
    auto shown = [](std::string s) {
      for (std::size_t at; (at = s.find('\n')) != std::string::npos;) s.replace(at, 1, "\\n");
      return s;
    };
    f.description_ += "; the loss covers the assistant's answers, from after \"" + shown(f.markers_->marker) +
                      "\" through " + (f.markers_->end_turn.empty() ? std::string("the end of the conversation")
                                                                    : "\"" + f.markers_->end_turn + "\"");
  }
  return f;
}

ChatTokens ChatFormat::tokenize(const boost::json::value& messages) const {
  if (const auto problem = message_problem(messages); !problem.empty()) throw FormatError(problem);
  chat::RenderInput in;
  in.messages = without_nulls(messages.as_array());
  in.special_tokens = special_tokens_;
  chat::Rendered rendered;
  try {
    rendered = template_->render_with_spans(in);
  } catch (const ConfigError& e) {  // the template raised, or failed on this conversation's values
    throw FormatError(e.what());
  }
  ChatTokens out;
  std::vector<std::size_t> ends;
  tokenizer_->encode_with_offsets(rendered.text, out.ids, ends);
  out.text = std::move(rendered.text);
  if (!response_only_) return out;
  if (markers_) {
    mark_responses(*markers_, out.ids, out.trained);
  } else {
    // A token is the assistant's when its text overlaps a {% generation %} block (transformers'
    // return_assistant_tokens_mask).
    out.trained.assign(out.ids.size(), 0);
    for (const auto& span : rendered.generation_spans)
      for (std::size_t i = 0; i < out.ids.size(); ++i) {
        const std::size_t begin = i == 0 ? 0 : ends[i - 1];
        if (begin < span.end && ends[i] > span.begin) out.trained[i] = 1;
      }
  }
  if (!has_label(out.trained.data(), out.trained.size()))
    throw FormatError("no assistant text to train on (--dataset.response_only_loss=true): the conversation has no "
                      "assistant turn the template marks");
  return out;
}

}  // namespace shardkit::text
