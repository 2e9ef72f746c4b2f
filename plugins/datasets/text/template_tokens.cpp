// AITraining's chatml and zephyr templates, and their special tokens added to a tokenizer.
#include "template_tokens.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>
#include <set>

#include "shardkit/error.hpp"
#include "shardkit/files.hpp"
#include "tokenizer/tokenizer.hpp"

namespace shardkit::text {
namespace fs = std::filesystem;
namespace {

// AITraining's templates (CHATML_CHAT_TEMPLATE and ZEPHYR_CHAT_TEMPLATE), byte for byte.
constexpr const char* kChatml =
    "{% for message in messages %}\n{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + "
    "'\n'}}{% if loop.last and add_generation_prompt %}{{'<|im_start|>assistant\n' }}{% endif %}{% endfor %}";
constexpr const char* kZephyr =
    "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + "
    "eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n{% "
    "elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% "
    "if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}";

boost::json::value parse_json(const std::string& text, const std::string& path) {
  boost::system::error_code ec;
  auto value = boost::json::parse(text, ec);
  if (ec || !value.is_object()) throw FormatError(path + ": not a JSON object");
  return value;
}

}  // namespace

boost::json::object read_tokenizer_config(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return {};
  return std::move(parse_json(read_text_file(path), path).as_object());
}

TemplateTokens template_tokens(std::string_view name) {
  if (name == "chatml")
    return {kChatml,
            {{"bos_token", "<s>"}, {"eos_token", "<|im_end|>"}, {"pad_token", "<pad>"}},
            {"<|im_start|>user", "<|im_start|>assistant", "<|im_start|>system", "<|im_end|>", "<s>", "<pad>"}};
  if (name == "zephyr")
    return {kZephyr,
            {{"bos_token", "<s>"}, {"eos_token", "</s>"}, {"pad_token", "<pad>"}},
            {"<|user|>", "<|assistant|>", "<|system|>", "</s>", "<s>", "<pad>"}};
  throw ConfigError("no built-in chat template named '" + std::string(name) + "' (chatml, zephyr)");
}

TokenizerWithTemplate add_template_tokens(const std::string& tokenizer_file, std::string_view name) {
  const auto tokens = template_tokens(name);
  const auto config_path = (fs::path(tokenizer_file).parent_path() / "tokenizer_config.json").string();
  const auto json_text = read_text_file(tokenizer_file);
  auto root = parse_json(json_text, tokenizer_file);
  auto config = read_tokenizer_config(config_path);
  const auto original = Tokenizer::from_json(json_text, tokenizer_file);

  auto* added_tokens = root.as_object().if_contains("added_tokens");
  if (!added_tokens || !added_tokens->is_array()) added_tokens = &(root.as_object()["added_tokens"] = boost::json::array());
  auto& entries = added_tokens->as_array();
  std::set<std::string> present;
  for (const auto& e : entries)
    if (e.is_object() && e.as_object().contains("content") && e.as_object().at("content").is_string())
      present.insert(std::string(e.as_object().at("content").as_string()));

  // transformers' order: the named special tokens (bos, eos, pad), then the additional ones.
  std::vector<std::string> order;
  for (const char* key : {"bos_token", "eos_token", "pad_token"}) order.push_back(tokens.special.at(key));
  order.insert(order.end(), tokens.additional.begin(), tokens.additional.end());
  TokenizerWithTemplate out;
  auto next = static_cast<std::uint32_t>(original->vocab_size());
  std::set<std::string> done;
  for (const auto& content : order) {
    if (!done.insert(content).second || present.count(content)) continue;
    const auto known = original->token_to_id(content);  // one of the model's vocabulary
    const auto id = known ? *known : next++;
    if (!known) out.added.push_back(content);
    entries.push_back({{"id", id}, {"content", content}, {"single_word", false}, {"lstrip", false},
                       {"rstrip", false}, {"normalized", false}, {"special", true}});
    if (auto* decoder = config.if_contains("added_tokens_decoder"); decoder && decoder->is_object())
      decoder->as_object()[std::to_string(id)] = {{"content", content}, {"lstrip", false}, {"normalized", false},
                                                  {"rstrip", false}, {"single_word", false}, {"special", true}};
  }
  std::stable_sort(entries.begin(), entries.end(), [](const boost::json::value& a, const boost::json::value& b) {
    const auto id = [](const boost::json::value& v) {
      const auto* i = v.is_object() ? v.as_object().if_contains("id") : nullptr;
      return i && i->is_number() ? i->to_number<std::int64_t>() : std::int64_t{0};
    };
    return id(a) < id(b);
  });

  for (const auto& [key, content] : tokens.special) config[key] = content;
  boost::json::array extra;
  for (const auto& t : tokens.additional) extra.emplace_back(t);
  config["extra_special_tokens"] = std::move(extra);
  config.erase("additional_special_tokens");
  config.erase("chat_template");  // transformers 5 saves the template as chat_template.jinja

  out.files["tokenizer.json"] = boost::json::serialize(root);
  out.files["tokenizer_config.json"] = boost::json::serialize(config);
  out.files["chat_template.jinja"] = std::string(tokens.source);
  const auto with = std::string(name) + "'s tokens added";
  auto tokenizer = Tokenizer::from_json(out.files["tokenizer.json"], tokenizer_file + " (" + with + ")");
  tokenizer->apply_config(out.files["tokenizer_config.json"], config_path + " (" + with + ")");
  out.tokenizer = std::move(tokenizer);
  return out;
}

}  // namespace shardkit::text
