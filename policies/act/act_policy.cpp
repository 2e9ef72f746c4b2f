// Policy `act`: ACT (Action Chunking Transformer) as LeRobot 0.6.1 trains it, with its
// checkpoint keys (`model.*`), wrap units (ACTEncoderLayer, ACTDecoderLayer), action queue,
// temporal ensembling and default LoRA targets.
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/torch.h>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>

#include <shardkit/capability.hpp>
#include <shardkit/error.hpp>
#include <shardkit/normalization.hpp>
#include <shardkit/optimizer_preset.hpp>
#include <shardkit/lora_targets.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/policy.hpp>
#include <shardkit/pretrained_config.hpp>

#include "act_config.hpp"
#include "act_model.hpp"
#include "act_options.hpp"
#include "lerobot_config.hpp"

namespace {

using shardkit::act::ActConfig;
namespace fs = std::filesystem;

/// torchvision's file name of an ImageNet weight set in the torch hub cache.
std::string hub_file(const std::string& weights) {
  if (weights == "ResNet18_Weights.IMAGENET1K_V1" || weights == "ResNet18_Weights.DEFAULT") return "resnet18-f37072fd.pth";
  if (weights == "ResNet34_Weights.IMAGENET1K_V1" || weights == "ResNet34_Weights.DEFAULT") return "resnet34-b627a593.pth";
  throw shardkit::ConfigError("--policy.pretrained_backbone_weights=" + weights + " is not a torchvision weight set "
                              "act knows (ResNet18_Weights.IMAGENET1K_V1, ResNet34_Weights.IMAGENET1K_V1) or null");
}

fs::path torch_home() {
  if (const char* home = std::getenv("TORCH_HOME")) return home;
  if (const char* cache = std::getenv("XDG_CACHE_HOME")) return fs::path(cache) / "torch";
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : ".") / ".cache" / "torch";
}

/// Copies torchvision's ImageNet weights from the local hub cache into `backbone` (never downloads).
void load_backbone_weights(torch::nn::Module& backbone, const std::string& weights) {
  const auto path = torch_home() / "hub" / "checkpoints" / hub_file(weights);
  if (!fs::is_regular_file(path))
    throw shardkit::ConfigError("--policy.pretrained_backbone_weights=" + weights + " needs " + path.string() +
                                ", which is not there (shardkit never downloads): fetch it once in Python with "
                                "torchvision.models.resnet18(weights=\"IMAGENET1K_V1\"), or pass "
                                "--policy.pretrained_backbone_weights=null to start the backbone from random weights");
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue loaded;
  try {
    loaded = torch::pickle_load(bytes);
  } catch (const std::exception& e) {
    throw shardkit::FormatError(path.string() + " is not a torchvision weight file: " + e.what());
  }
  if (!loaded.isGenericDict()) throw shardkit::FormatError(path.string() + " does not hold a state dict");
  const auto saved = loaded.toGenericDict();
  auto params = backbone.named_parameters();
  auto buffers = backbone.named_buffers();
  std::size_t copied = 0;
  torch::NoGradGuard no_grad;
  for (const auto& item : saved) {
    const auto name = item.key().toStringRef();
    if (name.rfind("fc.", 0) == 0) continue;  // the classifier: not part of the trunk
    auto* target = params.find(name);
    if (target == nullptr) target = buffers.find(name);
    if (target == nullptr) continue;  // num_batches_tracked: frozen batch norm has none
    const auto value = item.value().toTensor();
    if (value.sizes() != target->sizes())
      throw shardkit::FormatError(path.string() + ": " + name + " has shape " + c10::str(value.sizes()) +
                                  ", the backbone's is " + c10::str(target->sizes()));
    target->copy_(value);
    ++copied;
  }
  if (copied != params.size() + buffers.size())
    throw shardkit::FormatError(path.string() + " filled " + std::to_string(copied) + " of the backbone's " +
                                std::to_string(params.size() + buffers.size()) + " tensors: is it the " + weights +
                                " file?");
}

/// LeRobot's ACTTemporalEnsembler: an online, exponentially weighted average over the chunks
/// that predicted each step.
class TemporalEnsembler {
 public:
  TemporalEnsembler(double coeff, std::int64_t chunk) : chunk_(chunk) {
    weights_ = torch::exp(-coeff * torch::arange(chunk, torch::kFloat32));
    cumsum_ = weights_.cumsum(0);
  }
  torch::Tensor update(const torch::Tensor& actions) {  // (B, chunk, A) -> (B, A)
    weights_ = weights_.to(actions.device());
    cumsum_ = cumsum_.to(actions.device());
    if (!ensembled_.defined()) {
      ensembled_ = actions.clone();
      count_ = torch::ones({chunk_, 1}, torch::TensorOptions().dtype(torch::kLong).device(actions.device()));
    } else {
      ensembled_ = ensembled_ * cumsum_.index({count_ - 1});
      ensembled_ = ensembled_ + actions.narrow(1, 0, actions.size(1) - 1) * weights_.index({count_});
      ensembled_ = ensembled_ / cumsum_.index({count_});
      count_ = torch::clamp(count_ + 1, c10::nullopt, chunk_);
      ensembled_ = torch::cat({ensembled_, actions.narrow(1, actions.size(1) - 1, 1)}, 1);
      count_ = torch::cat({count_, torch::ones_like(count_.narrow(0, count_.size(0) - 1, 1))});
    }
    const auto action = ensembled_.select(1, 0);
    ensembled_ = ensembled_.narrow(1, 1, ensembled_.size(1) - 1);
    count_ = count_.narrow(0, 1, count_.size(0) - 1);
    return action;
  }

 private:
  std::int64_t chunk_;
  torch::Tensor weights_, cumsum_, ensembled_, count_;
};

class ActPolicy final
    : public shardkit::WithCapabilities<shardkit::Policy, shardkit::NormalizedPolicy, shardkit::PretrainedConfigWriter,
                                        shardkit::OptimizerPresetPolicy, shardkit::LoraTargetsPolicy> {
 public:
  explicit ActPolicy(const shardkit::PluginContext& ctx)
      : config_(shardkit::act::read_config(ctx)),
        options_(ctx.options),
        normalization_(shardkit::parse_normalization_mapping(ctx.options.get_string("normalization_mapping"),
                                                             "--policy.normalization_mapping")) {
    model = register_module("model", shardkit::act::ACT(config_));
    if (!config_.pretrained_backbone_weights.empty() && !config_.image_features.empty())
      load_backbone_weights(*model->named_children()["backbone"], config_.pretrained_backbone_weights);
    if (config_.temporal_ensemble_coeff)
      ensembler_.emplace(*config_.temporal_ensemble_coeff, config_.chunk_size);
  }

  shardkit::PolicyOutput forward(const shardkit::Batch& batch) override {
    const auto out = model(batch);
    const auto& target = batch.at("action");
    const auto abs_err = torch::l1_loss(out.actions, target, torch::Reduction::None);
    const auto valid = batch.at("action_is_pad").to(torch::kBool).logical_not().unsqueeze(-1);
    const auto num_valid = valid.sum() * abs_err.size(-1);
    const auto l1 = (abs_err * valid).sum() / num_valid.clamp_min(1);
    std::map<std::string, double> metrics{{"l1_loss", l1.item<double>()}};
    // Without the VAE the loss is L1 over the non-padded action elements alone: returned as a
    // sum with its count, so the trainer divides by the count of the whole optimizer step
    // (every micro-step, every rank) and the split of a batch does not change training. The
    // VAE's KL term is a mean over samples, another count, so with it the loss stays
    // LeRobot's per-batch mean.
    if (!config_.use_vae) return {(abs_err * valid).sum(), metrics, num_valid.to(torch::kFloat64)};
    auto loss = l1;
    if (out.log_sigma_x2.defined()) {
      const auto kld = (-0.5 * (1 + out.log_sigma_x2 - out.mu.pow(2) - out.log_sigma_x2.exp())).sum(-1).mean();
      metrics["kld_loss"] = kld.item<double>();
      loss = l1 + kld * config_.kl_weight;
    }
    return {loss, metrics};
  }

  /// One action per call (B, action_dim): a chunk is predicted when the queue of
  /// n_action_steps actions is empty, or every call with temporal ensembling (LeRobot's select_action).
  torch::Tensor select_action(const shardkit::Batch& batch) override {
    torch::NoGradGuard no_grad;
    eval();
    if (ensembler_) return ensembler_->update(model(batch).actions);
    if (queue_.empty())
      for (const auto& a : model(batch).actions.narrow(1, 0, config_.n_action_steps).transpose(0, 1).unbind(0))
        queue_.push_back(a);
    auto action = queue_.front();
    queue_.pop_front();
    return action;
  }

  std::vector<std::string> wrap_modules() const override { return {"ACTEncoderLayer", "ACTDecoderLayer"}; }

  /// LeRobot's ACT preset: AdamW at optimizer_lr with optimizer_weight_decay, the ResNet
  /// backbone at optimizer_lr_backbone (ACTPolicy.get_optim_params' two parameter groups).
  shardkit::OptimizerPreset optimizer_preset() const override {
    shardkit::OptimizerPreset preset{config_.optimizer_lr, config_.optimizer_weight_decay, {}};
    if (!config_.image_features.empty()) preset.groups.push_back({"model.backbone.", config_.optimizer_lr_backbone});
    return preset;
  }

  /// Where --peft.* puts LoRA adapters without --peft.target_modules. LeRobot gives ACT no
  /// default; for pi0, pi05 and smolvla (_get_default_peft_targets) it adapts the attention of the
  /// transformer that predicts actions and the state and action projections, and so does this for
  /// ACT: the attention modules of the encoder and decoder (whole: torch's MultiheadAttention
  /// packs q, k and v, so PEFT cannot adapt q and v alone), the state projections into the
  /// encoder and the action head. The VAE encoder, which only training runs, stays as it was.
  /// Full names, so that PEFT matches exactly these modules on LeRobot's ACTPolicy.
  std::vector<std::string> default_lora_targets() const override {
    std::vector<std::string> targets;
    for (std::int64_t i = 0; i < config_.n_encoder_layers; ++i)
      targets.push_back("model.encoder.layers." + std::to_string(i) + ".self_attn");
    for (std::int64_t i = 0; i < config_.n_decoder_layers; ++i) {
      targets.push_back("model.decoder.layers." + std::to_string(i) + ".self_attn");
      targets.push_back("model.decoder.layers." + std::to_string(i) + ".multihead_attn");
    }
    if (config_.state_dim > 0) targets.push_back("model.encoder_robot_state_input_proj");
    if (config_.env_state_dim > 0) targets.push_back("model.encoder_env_state_input_proj");
    targets.push_back("model.action_head");
    return targets;
  }

  /// LeRobot's preprocessor normalizes ACT's inputs and targets; select_action() returns normalized actions.
  shardkit::NormalizationMapping normalization_mapping() const override { return normalization_; }

  /// LeRobot's ACTConfig JSON, so that LeRobot's ACTPolicy.from_pretrained() reads the checkpoint.
  std::string pretrained_config_json() const override { return shardkit::act::lerobot_config_json(config_, options_); }

  shardkit::DeltaIndices delta_indices() const override {
    std::vector<std::int64_t> chunk(static_cast<std::size_t>(config_.chunk_size));
    for (std::int64_t i = 0; i < config_.chunk_size; ++i) chunk[static_cast<std::size_t>(i)] = i;
    return {{"action", chunk}};
  }

 private:
  ActConfig config_;
  shardkit::Config options_;
  shardkit::NormalizationMapping normalization_;
  shardkit::act::ACT model{nullptr};
  std::deque<torch::Tensor> queue_;
  std::optional<TemporalEnsembler> ensembler_;
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) { return std::make_shared<ActPolicy>(ctx); }

}  // namespace

SHARDKIT_PLUGIN_CLASS(policy, act, "0.1.0", "ACT, the Action Chunking Transformer, as LeRobot 0.6.1 builds it",
                      shardkit::act::kActOptions, make, 0u, ActPolicy)
