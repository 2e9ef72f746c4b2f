// The `text` dataset: tokenized documents, packed into blocks or padded one per sample.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shardkit/dataset.hpp"
#include "shardkit/plugin.hpp"

namespace shardkit::text {

class Tokenizer;

/// Samples of `max_seq_len` tokens: `input_ids`, `attention_mask` (1 = real token) and
/// `labels` (input_ids with -100 at padding), each int64 [B, T].
class TextDataset final : public Dataset {
 public:
  explicit TextDataset(const PluginContext& ctx);
  ~TextDataset() override;

  std::int64_t size() const override;
  FeatureShapes features() const override;
  Batch get_batch(const std::vector<std::int64_t>& indices) const override;

 private:
  std::int64_t seq_len_;
  bool packing_;
  std::int32_t pad_id_ = 0;
  // Packing: one stream of tokens cut every seq_len_; else one document per sample.
  std::vector<std::int32_t> stream_;
  std::vector<std::int32_t> tokens_;
  std::vector<std::int64_t> offsets_;
};

}  // namespace shardkit::text
