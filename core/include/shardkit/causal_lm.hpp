// An optional capability of a Policy: per-token logits of a causal language model.
//
// The llama policy has it, so that evaluation and tests read every position's logits, not only
// the next-token logits select_action() returns:
//
//   if (auto* lm = shardkit::capability<shardkit::CausalLanguageModel>(*policy))
//     const auto logits = lm->logits(batch);  // (B, T, vocab)
#pragma once

#include <cstdint>
#include <torch/types.h>

#include "shardkit/policy.hpp"

namespace shardkit {

class CausalLanguageModel {
 public:
  static constexpr const char* kCapabilityName = "causal_lm";
  static constexpr std::uint32_t kCapabilityVersion = 1;
  virtual ~CausalLanguageModel();
  /// Logits (B, T, vocab) of every position of batch["input_ids"] (B, T), with the optional
  /// batch["attention_mask"] (1 = real token, 0 = padding); position t scores token t + 1.
  virtual torch::Tensor logits(const Batch& batch) = 0;
};

}  // namespace shardkit
