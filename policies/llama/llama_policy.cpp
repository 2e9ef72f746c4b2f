// Policy `llama`: a Llama decoder computed as transformers' LlamaForCausalLM, with its state-dict
// keys, config.json and Hugging Face folders both ways; LlamaDecoderLayer is the wrap unit; the
// causal LM loss is a sum over labelled tokens with their count as the normalizer.
#include <torch/torch.h>

#include <filesystem>

#include <spdlog/logger.h>

#include <shardkit/capability.hpp>
#include <shardkit/causal_lm.hpp>
#include <shardkit/error.hpp>
#include <shardkit/files.hpp>
#include <shardkit/hf_folder.hpp>
#include <shardkit/nn/lora_linear.hpp>
#include <shardkit/lora_targets.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/policy.hpp>
#include <shardkit/pretrained_config.hpp>
#include <shardkit/pretrained_files.hpp>

#include "hf_config_json.hpp"
#include "llama_config.hpp"
#include "llama_model.hpp"
#include "llama_options.hpp"

namespace {

namespace fs = std::filesystem;
using shardkit::llama::LlamaConfig;

constexpr std::int64_t kIgnoreIndex = -100;

std::string dtype_name(torch::ScalarType t) {
  if (t == torch::kBFloat16) return "bfloat16";
  if (t == torch::kFloat16) return "float16";
  if (t == torch::kFloat64) return "float64";
  return "float32";
}

class LlamaPolicy final
    : public shardkit::WithCapabilities<shardkit::Policy, shardkit::PretrainedConfigWriter,
                                        shardkit::PretrainedWeightsLoader, shardkit::PretrainedFilesWriter,
                                        shardkit::CausalLanguageModel, shardkit::LoraTargetsPolicy> {
 public:
  explicit LlamaPolicy(const shardkit::PluginContext& ctx)
      : config_(shardkit::llama::read_config(ctx.options)), options_(ctx.options) {
    const auto* full = ctx.full_config;
    const auto path = full && full->has("policy.path") ? full->get_string("policy.path") : std::string();
    // A dataset without token ids (the default synthetic one) is refused at start-up, naming it,
    // and so are samples longer than the positions the model is made for.
    if (!ctx.features.empty()) check_sequence_length(shardkit::feature_numel(ctx, "input_ids", "llama"), full, path);
    model = register_module("model", shardkit::llama::LlamaModel(config_));
    if (!config_.tie_word_embeddings)
      lm_head = register_module("lm_head", shardkit::nn::LoraLinear(config_.hidden_size, config_.vocab_size, false));
    initialize();
    const bool resuming = full && full->has("resume") && full->get_bool("resume");  // the checkpoint's weights win
    // ... except in a PEFT run, whose checkpoints hold only the adapter: its base comes from here again.
    const bool peft = full && shardkit::peft_enabled(*full);
    if (!path.empty()) load_folder(path, !resuming || peft, peft, ctx.logger.get());
    // What the checkpoints' files hold: the parameters as built and loaded here. A sharded
    // backend under mixed precision later recasts the module's own parameters to its compute
    // dtype but saves these (its fp32 masters), so config.json must not read the module then.
    saved_dtype_ = model->embed_tokens->weight.scalar_type();
  }

  /// The causal LM loss: position t predicts labels[t + 1]; summed over the predicted
  /// positions whose label is not -100, with their count as the normalizer. Without "labels",
  /// input_ids where attention_mask is 1. With "position_ids" (packed sequences), each token
  /// attends within its own sequence only.
  shardkit::PolicyOutput forward(const shardkit::Batch& batch) override {
    const auto& ids = batch.at("input_ids");
    const auto mask = attention_mask(batch);
    auto labels = batch.count("labels") ? batch.at("labels")
                                        : (mask.defined() ? ids.masked_fill(mask.eq(0), kIgnoreIndex) : ids);
    const auto logits = logits_of(ids, mask, batch_tensor(batch, "position_ids"));
    const auto seq = ids.size(1);
    const auto predicted = logits.narrow(1, 0, seq - 1).to(torch::kFloat32).reshape({-1, config_.vocab_size});
    const auto targets = labels.narrow(1, 1, seq - 1).reshape({-1}).to(torch::kLong);
    const auto sum = torch::nn::functional::cross_entropy(
        predicted, targets,
        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(kIgnoreIndex).reduction(torch::kSum));
    const auto count = targets.ne(kIgnoreIndex).sum().to(torch::kFloat32);
    return {sum, {{"tokens", count.item<double>()}}, count};
  }

  /// The next-token logits (B, vocab_size) at each row's last real position (the last
  /// attention_mask 1; the last position without a mask), whether rows are padded left or right.
  torch::Tensor select_action(const shardkit::Batch& batch) override {
    torch::NoGradGuard no_grad;
    const auto& ids = batch.at("input_ids");
    const auto mask = attention_mask(batch);
    const auto logits = logits_of(ids, mask, batch_tensor(batch, "position_ids"));
    auto last = torch::full({ids.size(0)}, ids.size(1) - 1, torch::TensorOptions().dtype(torch::kLong).device(ids.device()));
    if (mask.defined()) {
      const auto positions = torch::arange(ids.size(1), last.options()).unsqueeze(0);
      last = (positions * mask.ne(0).to(torch::kLong)).argmax(1);
    }
    return logits.index({torch::arange(ids.size(0), last.options()), last});
  }

  torch::Tensor logits(const shardkit::Batch& batch) override {
    return logits_of(batch.at("input_ids"), attention_mask(batch), batch_tensor(batch, "position_ids"));
  }

  std::vector<std::string> wrap_modules() const override { return {"LlamaDecoderLayer"}; }

  /// PEFT's default LoRA targets for Llama.
  std::vector<std::string> default_lora_targets() const override { return {"q_proj", "v_proj"}; }

  std::string pretrained_config_json() const override {
    return shardkit::llama::hf_config_json(config_, options_, dtype_name(saved_dtype_));
  }

  bool loaded_pretrained_weights() const override { return loaded_; }

  std::map<std::string, std::string> pretrained_files() const override { return tokenizer_files_; }

 private:
  /// Per-token logits (B, T, vocab_size) for `input_ids`, `attention_mask` and `position_ids`.
  torch::Tensor logits_of(const torch::Tensor& ids, const torch::Tensor& mask, const torch::Tensor& positions) {
    const auto hidden = model->forward(ids, mask, positions);
    return lm_head ? lm_head(hidden) : torch::matmul(hidden, model->embed_tokens->weight.t());
  }

  static torch::Tensor attention_mask(const shardkit::Batch& batch) { return batch_tensor(batch, "attention_mask"); }

  /// batch[key], or an undefined tensor when the batch has none.
  static torch::Tensor batch_tensor(const shardkit::Batch& batch, const char* key) {
    const auto it = batch.find(key);
    return it == batch.end() ? torch::Tensor() : it->second;
  }

  /// transformers' _init_weights: linear and embedding weights N(0, initializer_range), biases 0.
  void initialize() {
    torch::NoGradGuard no_grad;
    for (auto& p : named_parameters()) {
      const auto& name = p.key();
      if (name.find("layernorm") != std::string::npos || name == "model.norm.weight") continue;
      if (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0) p.value().zero_();
      else p.value().normal_(0.0, config_.initializer_range);
    }
  }

  /// Samples of `length` tokens must fit the model's positions (transformers' models are not
  /// trained past max_position_embeddings, and shardkit would train on them silently).
  void check_sequence_length(std::int64_t length, const shardkit::Config* full, const std::string& path) const {
    if (length <= config_.max_position_embeddings) return;
    const auto n = std::to_string(length), limit = std::to_string(config_.max_position_embeddings);
    const bool text = full && full->has("dataset.max_seq_len");
    const auto samples = text ? "--dataset.max_seq_len=" + n + " is" : "the dataset's samples (" + n + " tokens) are";
    const auto source = path.empty() ? "--policy.max_position_embeddings=" + limit
                                     : "max_position_embeddings=" + limit + " (config.json of --policy.path=" + path + ")";
    throw shardkit::ConfigError(samples + " longer than the model's " + source + ": it has no trained positions "
                                "past " + limit + "; " + (text ? "lower --dataset.max_seq_len to " + limit + " or less"
                                                                : "give samples of at most " + limit + " tokens"));
  }

  /// --policy.path: a Hugging Face folder's tokenizer files and (unless resuming) weights, when
  /// it has them; a shardkit checkpoint in another format is left to the trainer. `peft`: the
  /// run trains adapters on these weights (what its log line says is saved).
  void load_folder(const std::string& path, bool weights, bool peft, spdlog::logger* log) {
    if (!shardkit::is_hf_model_folder(path)) return;
    if (const auto type = shardkit::hf_model_type(path); type != "llama")
      throw shardkit::ConfigError("--policy.path=" + path + " holds a '" + type + "' model (config.json's model_type); "
                                  "the llama policy loads model_type 'llama' only");
    // Every tokenizer file (chat_template.jinja included) goes into each checkpoint and merged_model/.
    for (const auto& name : shardkit::hf_tokenizer_files(path))
      tokenizer_files_[name] = shardkit::read_text_file((fs::path(path) / name).string());
    if (log && fs::is_directory(fs::path(path) / "additional_chat_templates"))
      log->warn("{}/additional_chat_templates/ (the base model's named chat templates) is not copied into the "
                "checkpoints; its chat_template.jinja is", path);
    if (!weights) return;
    if (!shardkit::has_hf_weights(path)) {
      auto folder = fs::path(path).lexically_normal();
      if (folder.filename().empty()) folder = folder.parent_path();
      if (fs::exists(folder.parent_path() / "training_state")) return;  // a dcp checkpoint: the trainer loads it
      throw shardkit::ConfigError("--policy.path=" + path + " has a config.json but neither model.safetensors nor "
                                  "model.safetensors.index.json: copy the model's weights into that folder");
    }
    std::vector<std::string> ignored;
    if (config_.tie_word_embeddings) ignored.push_back("lm_head.weight");  // the same tensor as embed_tokens
    const auto stored = shardkit::load_hf_weights_with_dtypes(*this, path, ignored);
    loaded_ = true;
    if (log) log->info("{}", stored_dtype_note(path, stored, peft));
  }

  /// What a user should know of the dtypes: those the base stores, and that training keeps and
  /// saves the parameters' own (fp32 masters under any --accelerator.mixed_precision).
  std::string stored_dtype_note(const std::string& path, const shardkit::StoredDtypes& stored, bool peft) const {
    const auto kept = dtype_name(model->embed_tokens->weight.scalar_type());
    std::string kinds;
    bool same = true;
    for (const auto& [dtype, count] : stored) {
      kinds += (kinds.empty() ? "" : ", ") + dtype_name(dtype) + " (" + std::to_string(count) + " tensors)";
      same = same && dtype_name(dtype) == kept;
    }
    const auto line = "--policy.path=" + path + " stores its weights in " + kinds;
    if (same) return line + "; training keeps them and checkpoints save them in " + kept;
    return line + ": training keeps " + kept + " master weights (what the optimizer steps; --accelerator."
           "mixed_precision only computes in a lower precision) and saves them so: " +
           (peft ? "the adapters of each checkpoint and merged_model/ (--peft.merge) hold " + kept
                 : "each checkpoint's model.safetensors holds " + kept + " and its config.json says "
                   "\"torch_dtype\": \"" + kept + "\"");
  }

  LlamaConfig config_;
  shardkit::Config options_;
  shardkit::llama::LlamaModel model{nullptr};
  shardkit::nn::LoraLinear lm_head{nullptr};
  bool loaded_ = false;
  torch::ScalarType saved_dtype_ = torch::kFloat32;
  std::map<std::string, std::string> tokenizer_files_;
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return std::make_shared<LlamaPolicy>(ctx);
}

}  // namespace

SHARDKIT_PLUGIN_CLASS(policy, llama, "0.1.0",
                      "Llama decoder as transformers' LlamaForCausalLM (causal LM on input_ids)",
                      shardkit::llama::kLlamaOptions, make, 0u, LlamaPolicy)
