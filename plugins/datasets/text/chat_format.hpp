// Conversations to training tokens: the chat template --dataset.chat_template names, rendered as
// transformers' apply_chat_template renders it, tokenized as TRL's SFTTrainer tokenizes it, and
// the tokens the loss is taken on (--dataset.response_only_loss).
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat_template/chat_template.hpp"
#include "response_markers.hpp"

namespace shardkit::text {

class Tokenizer;

/// AITraining's own template source (src/autotrain/trainers/clm/utils.py): `chatml` and `zephyr`
/// (what its --chat-template installs) and `fallback` (for a tokenizer without a template).
/// Empty for any other name.
std::string_view aitraining_template(std::string_view name);

/// One conversation's tokens and which of them the loss is taken on.
struct ChatTokens {
  std::string text;  ///< the rendered conversation
  std::vector<std::uint32_t> ids;
  std::vector<std::uint8_t> trained;  ///< 1 = a label; empty when every token is one
};

/// Whether the first `n` tokens of a conversation hold a label: `trained` points at its first
/// token's flag, or is null when every token is one. A sample without any is left out, as TRL's
/// SFTTrainer drops it.
bool has_label(const std::uint8_t* trained, std::size_t n);

class ChatFormat {
 public:
  /// `chat_template`: `tokenizer` (the template in tokenizer_config.json or chat_template.jinja
  /// beside `tokenizer_file`; AITraining's ChatML fallback when there is none), `chatml` or
  /// `zephyr` (AITraining's templates; `tokenizer` from add_template_tokens(), which gives it their
  /// special tokens), or
  /// a .jinja file. `response_only_loss`: train on the assistant's tokens only, taken from the
  /// template's {% generation %} blocks, else from its response markers; a template with neither
  /// is a ConfigError saying so.
  static ChatFormat load(const std::string& chat_template, const std::string& tokenizer_file,
                         std::shared_ptr<const Tokenizer> tokenizer, bool response_only_loss);

  /// Renders and tokenizes `messages` (apply_chat_template(tokenize=True): no special tokens added
  /// beyond the template's own, no EOS appended). Throws FormatError saying what is wrong with a
  /// conversation that cannot be rendered (not a list, empty, a message without a string role or
  /// content, an error the template raises, no assistant text to train on).
  ChatTokens tokenize(const boost::json::value& messages) const;

  /// Whether only some tokens are trained on (ChatTokens::trained is set).
  bool response_only() const { return response_only_; }
  /// For the log: which template, and how the trained tokens are chosen.
  const std::string& description() const { return description_; }

 private:
  ChatFormat() = default;

  std::shared_ptr<const chat::ChatTemplate> template_;
  std::shared_ptr<const Tokenizer> tokenizer_;
  std::map<std::string, std::string> special_tokens_;
  bool response_only_ = false;
  std::optional<ResponseMarkers> markers_;  ///< set when responses are found by markers
  std::string description_;
};

}  // namespace shardkit::text
