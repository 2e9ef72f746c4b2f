// AITraining's chatml and zephyr templates and the special tokens they give the tokenizer
// (get_tokenizer in AITraining's src/autotrain/trainers/clm/utils.py): a tokenizer that lacks
// them gets them, as transformers' AutoTokenizer.from_pretrained(bos_token=, eos_token=,
// pad_token=, additional_special_tokens=) adds them.
//
//   auto with = add_template_tokens("model/tokenizer.json", "chatml");
//   with.tokenizer->token_to_id("<|im_start|>user");  // a new id when the tokenizer lacked it
#pragma once

#include <boost/json/object.hpp>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardkit::text {

class Tokenizer;

/// A built-in template's source and special tokens.
struct TemplateTokens {
  std::string_view source;  ///< the Jinja template AITraining installs
  std::map<std::string, std::string> special;  ///< bos_token, eos_token, pad_token -> content
  std::vector<std::string> additional;         ///< additional_special_tokens, in AITraining's order
};

/// A tokenizer_config.json as a JSON object: empty when the file is missing, FormatError naming
/// it when it is not a JSON object.
boost::json::object read_tokenizer_config(const std::string& path);

/// `name`'s template and tokens: chatml or zephyr (anything else throws ConfigError).
TemplateTokens template_tokens(std::string_view name);

/// A tokenizer with a template's tokens.
struct TokenizerWithTemplate {
  std::shared_ptr<const Tokenizer> tokenizer;
  /// What AITraining's tokenizer.save_pretrained writes: tokenizer.json (the tokens added),
  /// tokenizer_config.json (bos/eos/pad and extra_special_tokens set, chat_template moved out)
  /// and chat_template.jinja (the template).
  std::map<std::string, std::string> files;
  std::vector<std::string> added;  ///< the tokens given new ids, in id order
};

/// `tokenizer_file` and the tokenizer_config.json beside it with `name`'s tokens, in transformers'
/// order: bos, eos, pad, then the additional ones; a token the tokenizer has keeps its id (one of
/// the model's vocabulary becomes an added special token), the others take the next ids.
TokenizerWithTemplate add_template_tokens(const std::string& tokenizer_file, std::string_view name);

}  // namespace shardkit::text
