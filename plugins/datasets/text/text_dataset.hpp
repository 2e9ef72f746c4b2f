// The `text` dataset: tokenized documents, packed into blocks or padded one per sample; or
// conversations rendered with a chat template, one per sample, labelled on the assistant's tokens.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shardkit/capability.hpp"
#include "shardkit/dataset.hpp"
#include "shardkit/dataset_preview.hpp"
#include "shardkit/plugin.hpp"
#include "shardkit/token_embeddings.hpp"

namespace shardkit::text {

class Tokenizer;

/// Samples of `max_seq_len` tokens: `input_ids`, `attention_mask` (1 = real token) and
/// `labels` (input_ids with -100 at padding, and for conversations at tokens not trained on),
/// each int64 [B, T]; packed conversations add `position_ids` (restarting at each one).
class TextDataset final : public WithCapabilities<Dataset, DatasetPreview, DatasetTokenizer> {
 public:
  explicit TextDataset(const PluginContext& ctx);
  ~TextDataset() override;

  std::int64_t size() const override;
  FeatureShapes features() const override;
  Batch get_batch(const std::vector<std::int64_t>& indices) const override;
  /// --dataset.preview=N: the first N examples as {"text", "input_ids", "labels"} lines.
  void write_preview(std::ostream& out) const override;
  /// len(tokenizer): with --dataset.chat_template=chatml|zephyr, their special tokens included.
  std::int64_t token_count() const override { return token_count_; }
  /// With --dataset.chat_template=chatml|zephyr: the tokenizer with their tokens and template.
  std::map<std::string, std::string> tokenizer_files() const override { return tokenizer_files_; }
  std::string tokenizer_change() const override { return tokenizer_change_; }

 private:
  std::int64_t token_count_ = 0;
  std::map<std::string, std::string> tokenizer_files_;
  std::string tokenizer_change_;
  std::int64_t seq_len_;
  bool packing_ = false;
  bool packed_chat_ = false;  ///< conversations packed into rows, with position_ids
  std::int32_t pad_id_ = 0;
  // Packed text: one stream of tokens cut every seq_len_. Else sample i is
  // tokens_[offsets_[i], offsets_[i + 1]): one document, one conversation or packed conversations.
  std::vector<std::int32_t> stream_;
  std::vector<std::int32_t> tokens_;
  std::vector<std::uint8_t> trained_;  ///< per token of tokens_; empty when every token is a label
  std::vector<std::int64_t> offsets_;
  std::vector<std::int64_t> starts_;  ///< conversations: where each one starts in tokens_
  bool previewing_ = false;  ///< --dataset.preview: no samples, only preview_
  std::string preview_;      ///< the lines write_preview() writes
};

}  // namespace shardkit::text
