// The Llama-layout policies: construction from options and Hugging Face folders, the causal LM
// loss and logits, config.json and the tokenizer files each checkpoint carries.
#include "llama_policy.hpp"

#include <filesystem>

#include <spdlog/logger.h>

#include <shardkit/error.hpp>
#include <shardkit/files.hpp>
#include <shardkit/hf_folder.hpp>
#include <shardkit/nn/linear_cross_entropy.hpp>

#include "hf_config_json.hpp"

namespace shardkit::llama {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kIgnoreIndex = -100;

std::string dtype_name(torch::ScalarType t) {
  if (t == torch::kBFloat16) return "bfloat16";
  if (t == torch::kFloat16) return "float16";
  if (t == torch::kFloat64) return "float64";
  return "float32";
}

/// batch[key], or an undefined tensor when the batch has none.
torch::Tensor batch_tensor(const Batch& batch, const char* key) {
  const auto it = batch.find(key);
  return it == batch.end() ? torch::Tensor() : it->second;
}

torch::Tensor attention_mask(const Batch& batch) { return batch_tensor(batch, "attention_mask"); }

/// What a user should know of the dtypes: those the base stores, and that training keeps and
/// saves the parameters' own `kept` dtype (fp32 masters under any --accelerator.mixed_precision).
std::string stored_dtype_note(const std::string& path, const StoredDtypes& stored, bool peft, const std::string& kept) {
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

}  // namespace

LlamaPolicy::LlamaPolicy(const PluginContext& ctx, Family family)
    : config_(read_config(ctx.options, family)), options_(ctx.options) {
  const auto* full = ctx.full_config;
  const auto path = full && full->has("policy.path") ? full->get_string("policy.path") : std::string();
  // A dataset without token ids (the default synthetic one) is refused at start-up, naming it,
  // and so are samples longer than the positions the model is made for.
  if (!ctx.features.empty())
    check_sequence_length(feature_numel(ctx, "input_ids", names_of(family).model_type), full, path);
  model = register_module("model", LlamaModel(config_));
  if (!config_.tie_word_embeddings)
    lm_head = register_module("lm_head", nn::LoraLinear(config_.hidden_size, config_.vocab_size, false));
  initialize();
  const bool resuming = full && full->has("resume") && full->get_bool("resume");  // the checkpoint's weights win
  // ... except in a PEFT run, whose checkpoints hold only the adapter: its base comes from here again.
  const bool peft = full && peft_enabled(*full);
  if (!path.empty()) load_folder(path, !resuming || peft, peft, ctx.logger.get());
  // What the checkpoints' files hold: the parameters as built and loaded here. A sharded
  // backend under mixed precision later recasts the module's own parameters to its compute
  // dtype but saves these (its fp32 masters), so config.json must not read the module then.
  saved_dtype_ = model->embed_tokens->weight.scalar_type();
}

PolicyOutput LlamaPolicy::forward(const Batch& batch) {
  const auto& ids = batch.at("input_ids");
  const auto mask = attention_mask(batch);
  auto labels = batch.count("labels") ? batch.at("labels")
                                      : (mask.defined() ? ids.masked_fill(mask.eq(0), kIgnoreIndex) : ids);
  // The last position predicts nothing: its hidden state is left out before the output layer.
  const auto seq = ids.size(1);
  const auto hidden = model->forward(ids, mask, batch_tensor(batch, "position_ids"))
                          .narrow(1, 0, seq - 1)
                          .reshape({-1, config_.hidden_size});
  const auto targets = labels.narrow(1, 1, seq - 1).reshape({-1}).to(torch::kLong);
  // The output layer and the loss in chunks, never the whole logits (linear_cross_entropy.hpp),
  // unless autocast or an adapter on lm_head computes the output layer otherwise.
  const auto& weight = lm_head ? lm_head->weight : model->embed_tokens->weight;
  torch::Tensor sum;
  if (!(lm_head && lm_head->lora_enabled()) && nn::linear_cross_entropy_applies(hidden, weight)) {
    sum = nn::linear_cross_entropy(hidden, weight, targets, kIgnoreIndex);
  } else {
    sum = torch::nn::functional::cross_entropy(
        head(hidden).to(torch::kFloat32), targets,
        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(kIgnoreIndex).reduction(torch::kSum));
  }
  const auto count = targets.ne(kIgnoreIndex).sum().to(torch::kFloat32);
  return {sum, {{"tokens", count.item<double>()}}, count};
}

torch::Tensor LlamaPolicy::select_action(const Batch& batch) {
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

torch::Tensor LlamaPolicy::logits(const Batch& batch) {
  return logits_of(batch.at("input_ids"), attention_mask(batch), batch_tensor(batch, "position_ids"));
}

std::vector<std::string> LlamaPolicy::wrap_modules() const { return {names_of(config_.family).decoder_layer}; }

void LlamaPolicy::resize_token_embeddings(std::int64_t count) {
  const auto old = config_.vocab_size;
  if (count <= old)
    throw RuntimeError("resize_token_embeddings(" + std::to_string(count) + "): the model already has " +
                       std::to_string(old) + " token embeddings; they only grow");
  torch::NoGradGuard no_grad;
  // The rows appended: each the mean of the old rows, computed in float32 as transformers does.
  const auto grow = [&](torch::Tensor& weight) {
    const auto mean = weight.to(torch::kFloat32).mean(0, true).to(weight.scalar_type());
    weight.set_data(torch::cat({weight, mean.expand({count - old, weight.size(1)})}, 0).contiguous());
  };
  grow(model->embed_tokens->weight);
  model->embed_tokens->options.num_embeddings(count);
  if (lm_head) grow(lm_head->weight);
  config_.vocab_size = count;
}

std::string LlamaPolicy::pretrained_config_json() const {
  return hf_config_json(config_, options_, dtype_name(saved_dtype_));
}

/// Per-token logits (B, T, vocab_size) for `input_ids`, `attention_mask` and `position_ids`.
torch::Tensor LlamaPolicy::logits_of(const torch::Tensor& ids, const torch::Tensor& mask, const torch::Tensor& positions) {
  return head(model->forward(ids, mask, positions));
}

torch::Tensor LlamaPolicy::head(const torch::Tensor& hidden) {
  return lm_head ? lm_head(hidden) : torch::matmul(hidden, model->embed_tokens->weight.t());
}

/// transformers' _init_weights: linear and embedding weights N(0, initializer_range), biases 0,
/// norms (RMSNorm weights, q_norm and k_norm included) 1.
void LlamaPolicy::initialize() {
  torch::NoGradGuard no_grad;
  for (auto& p : named_parameters()) {
    const auto& name = p.key();
    if (name.find("norm") != std::string::npos) continue;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0) p.value().zero_();
    else p.value().normal_(0.0, config_.initializer_range);
  }
}

/// Samples of `length` tokens must fit the model's positions (transformers' models are not
/// trained past max_position_embeddings, and shardkit would train on them silently).
void LlamaPolicy::check_sequence_length(std::int64_t length, const Config* full, const std::string& path) const {
  if (length <= config_.max_position_embeddings) return;
  const auto n = std::to_string(length), limit = std::to_string(config_.max_position_embeddings);
  const bool text = full && full->has("dataset.max_seq_len");
  const auto samples = text ? "--dataset.max_seq_len=" + n + " is" : "the dataset's samples (" + n + " tokens) are";
  const auto source = path.empty() ? "--policy.max_position_embeddings=" + limit
                                   : "max_position_embeddings=" + limit + " (config.json of --policy.path=" + path + ")";
  throw ConfigError(samples + " longer than the model's " + source + ": it has no trained positions "
                              "past " + limit + "; " + (text ? "lower --dataset.max_seq_len to " + limit + " or less"
                                                              : "give samples of at most " + limit + " tokens"));
}

/// --policy.path: a Hugging Face folder's tokenizer files and (unless resuming) weights, when
/// it has them; a shardkit checkpoint in another format is left to the trainer. `peft`: the
/// run trains adapters on these weights (what its log line says is saved).
void LlamaPolicy::load_folder(const std::string& path, bool weights, bool peft, spdlog::logger* log) {
  if (!is_hf_model_folder(path)) return;
  const std::string own = names_of(config_.family).model_type;
  if (const auto type = hf_model_type(path); type != own)
    throw ConfigError("--policy.path=" + path + " holds a '" + type + "' model (config.json's model_type); "
                      "the " + own + " policy loads model_type '" + own + "' only");
  // Every tokenizer file (chat_template.jinja included) goes into each checkpoint and merged_model/.
  for (const auto& name : hf_tokenizer_files(path))
    tokenizer_files_[name] = read_text_file((fs::path(path) / name).string());
  if (log && fs::is_directory(fs::path(path) / "additional_chat_templates"))
    log->warn("{}/additional_chat_templates/ (the base model's named chat templates) is not copied into the "
              "checkpoints; its chat_template.jinja is", path);
  if (!weights) return;
  if (!has_hf_weights(path)) {
    auto folder = fs::path(path).lexically_normal();
    if (folder.filename().empty()) folder = folder.parent_path();
    if (fs::exists(folder.parent_path() / "training_state")) return;  // a dcp checkpoint: the trainer loads it
    throw ConfigError("--policy.path=" + path + " has a config.json but neither model.safetensors nor "
                      "model.safetensors.index.json: copy the model's weights into that folder");
  }
  std::vector<std::string> ignored;
  if (config_.tie_word_embeddings) ignored.push_back("lm_head.weight");  // the same tensor as embed_tokens
  const auto stored = load_hf_weights_with_dtypes(*this, path, ignored);
  loaded_ = true;
  if (log) log->info("{}", stored_dtype_note(path, stored, peft, dtype_name(model->embed_tokens->weight.scalar_type())));
}

std::shared_ptr<Plugin> make_policy(const PluginContext& ctx, Family family) {
  return std::make_shared<LlamaPolicy>(ctx, family);
}

}  // namespace shardkit::llama
