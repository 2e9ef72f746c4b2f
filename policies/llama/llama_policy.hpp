// The policies of the Llama-layout families (llama, mistral, qwen2, qwen3): a decoder computed
// as transformers' <Family>ForCausalLM, with its state-dict keys, config.json and Hugging Face
// folders both ways; the family's decoder layer is the wrap unit; the causal LM loss is a sum
// over labelled tokens with their count as the normalizer. Each family's plugin (llama_plugin.cpp,
// ...) is this class with its option table.
#pragma once

#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <shardkit/capability.hpp>
#include <shardkit/causal_lm.hpp>
#include <shardkit/lora_targets.hpp>
#include <shardkit/nn/lora_linear.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/policy.hpp>
#include <shardkit/pretrained_config.hpp>
#include <shardkit/pretrained_files.hpp>
#include <shardkit/token_embeddings.hpp>

#include "llama_config.hpp"
#include "llama_model.hpp"

namespace spdlog {
class logger;
}

namespace shardkit::llama {

class LlamaPolicy final
    : public WithCapabilities<Policy, PretrainedConfigWriter, PretrainedWeightsLoader, PretrainedFilesWriter,
                              CausalLanguageModel, LoraTargetsPolicy, ResizableTokenEmbeddings> {
 public:
  LlamaPolicy(const PluginContext& ctx, Family family);

  /// The causal LM loss: position t predicts labels[t + 1]; summed over the predicted
  /// positions whose label is not -100, with their count as the normalizer. Without "labels",
  /// input_ids where attention_mask is 1. With "position_ids" (packed sequences), each token
  /// attends within its own sequence only.
  PolicyOutput forward(const Batch& batch) override;
  /// The next-token logits (B, vocab_size) at each row's last real position (the last
  /// attention_mask 1; the last position without a mask), whether rows are padded left or right.
  torch::Tensor select_action(const Batch& batch) override;
  torch::Tensor logits(const Batch& batch) override;
  /// The family's decoder layer class (LlamaDecoderLayer, Qwen2DecoderLayer, ...).
  std::vector<std::string> wrap_modules() const override;
  /// PEFT's default LoRA targets for these families.
  std::vector<std::string> default_lora_targets() const override { return {"q_proj", "v_proj"}; }
  std::string pretrained_config_json() const override;
  bool loaded_pretrained_weights() const override { return loaded_; }
  std::map<std::string, std::string> pretrained_files() const override { return tokenizer_files_; }
  std::int64_t token_embedding_count() const override { return config_.vocab_size; }
  /// As transformers' resize_token_embeddings(count) with mean_resizing: the new rows of
  /// embed_tokens (and of an untied lm_head) are the mean of the old ones (transformers samples
  /// them around that mean with covariance 1e-9 x the rows' own; the mean itself makes a resumed
  /// run rebuild the same rows).
  void resize_token_embeddings(std::int64_t count) override;

 private:
  torch::Tensor logits_of(const torch::Tensor& ids, const torch::Tensor& mask, const torch::Tensor& positions);
  /// The output layer: logits of final hidden states (lm_head, or the tied token embeddings).
  torch::Tensor head(const torch::Tensor& hidden);
  void initialize();
  void check_sequence_length(std::int64_t length, const Config* full, const std::string& path) const;
  void load_folder(const std::string& path, bool weights, bool peft, spdlog::logger* log);

  LlamaConfig config_;
  Config options_;
  LlamaModel model{nullptr};
  nn::LoraLinear lm_head{nullptr};
  bool loaded_ = false;
  torch::ScalarType saved_dtype_ = torch::kFloat32;
  std::map<std::string, std::string> tokenizer_files_;
};

/// The policy of `family` (each family plugin's factory).
std::shared_ptr<Plugin> make_policy(const PluginContext& ctx, Family family);

}  // namespace shardkit::llama
