// Optional capabilities that keep a language model's embeddings and its dataset's tokenizer in
// step: the dataset says how many token ids its samples may hold (AITraining's chatml and zephyr
// templates add special tokens to the tokenizer), the policy grows its embeddings to match, as
// AITraining calls transformers' resize_token_embeddings(len(tokenizer)).
//
//   if (const auto* tokens = capability<DatasetTokenizer>(dataset))
//     if (auto* embeddings = capability<ResizableTokenEmbeddings>(policy);
//         embeddings && tokens->token_count() > embeddings->token_embedding_count())
//       embeddings->resize_token_embeddings(tokens->token_count());
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace shardkit {

/// A dataset of token ids made with a tokenizer (the `text` dataset).
class DatasetTokenizer {
 public:
  static constexpr const char* kCapabilityName = "dataset_tokenizer";
  static constexpr std::uint32_t kCapabilityVersion = 1;
  virtual ~DatasetTokenizer();
  /// How many token ids the tokenizer has (transformers' len(tokenizer)), tokens it added
  /// included: every id a sample holds is below it.
  virtual std::int64_t token_count() const = 0;
  /// The tokenizer's files when the dataset changed the tokenizer it was given (file name -> its
  /// whole content: tokenizer.json, tokenizer_config.json, chat_template.jinja), which then
  /// replace the model folder's tokenizer files in each checkpoint; empty when it did not.
  virtual std::map<std::string, std::string> tokenizer_files() const = 0;
  /// What was changed, for the log ("" when nothing was).
  virtual std::string tokenizer_change() const = 0;
};

/// A policy whose token embeddings (and an untied output layer) can grow.
class ResizableTokenEmbeddings {
 public:
  static constexpr const char* kCapabilityName = "token_embeddings";
  static constexpr std::uint32_t kCapabilityVersion = 1;
  virtual ~ResizableTokenEmbeddings();
  /// Rows of the input embedding (the model's vocab_size).
  virtual std::int64_t token_embedding_count() const = 0;
  /// Grows the input embedding and an untied output layer to `count` rows (> the current count;
  /// called before the backend lays the model out), each new row the mean of the old rows;
  /// config.json's vocab_size follows.
  virtual void resize_token_embeddings(std::int64_t count) = 0;
};

}  // namespace shardkit
