// Policy `tiny_mlp`: the complete minimal policy of docs/plugins.md (observation.state -> MLP -> action).
#include <torch/torch.h>

#include <shardkit/logging.hpp>  // makes ctx.logger (an spdlog logger) usable
#include <shardkit/plugin.hpp>
#include <shardkit/policy.hpp>

namespace {

class TinyMlpPolicy final : public shardkit::Policy {
 public:
  explicit TinyMlpPolicy(const shardkit::PluginContext& ctx) {
    // Layer sizes come from the dataset's features (shapes without the batch dimension);
    // feature_numel() throws a clear error when the dataset lacks one.
    const auto state_dim = shardkit::feature_numel(ctx, "observation.state", "tiny_mlp");
    const auto action_dim = shardkit::feature_numel(ctx, "action", "tiny_mlp");
    const auto hidden = ctx.options.get_int("hidden_dim");  // --policy.hidden_dim
    // Built on the CPU: the trainer moves the policy to --policy.device after this factory
    // returns, and moves every batch there before forward().
    net = register_module("net", torch::nn::Sequential(torch::nn::Linear(state_dim, hidden), torch::nn::ReLU(),
                                                      torch::nn::Linear(hidden, action_dim)));
    ctx.logger->info("tiny_mlp: {} -> {} -> {}", state_dim, hidden, action_dim);
  }

  // Training: one micro-batch in, the mean loss out, plus optional metrics to log
  // (averaged across ranks, written to metrics.jsonl and every logger).
  shardkit::PolicyOutput forward(const shardkit::Batch& batch) override {
    const auto prediction = predict(batch.at("observation.state"));
    const auto target = batch.at("action").reshape(prediction.sizes());
    const auto loss = torch::mse_loss(prediction, target);
    return {loss, {{"abs_error", (prediction - target).abs().mean().item<double>()}}};
  }

  // Inference: the action for a batch of observations. shardkit-train never calls it; your
  // evaluation or deployment code does, after loading a checkpoint (policy.eval(), NoGradGuard).
  torch::Tensor select_action(const shardkit::Batch& batch) override {
    return predict(batch.at("observation.state"));
  }

  // No repeated blocks: single and ddp need none. A sharded backend (fsdp, zero stage 3)
  // needs shardkit::nn::Block layers named here (see examples/third_party_policy).
  std::vector<std::string> wrap_modules() const override { return {}; }

 private:
  torch::Tensor predict(const torch::Tensor& state) { return net->forward(state.flatten(1)); }

  torch::nn::Sequential net{nullptr};
};

// name, type, default, help, min, max, choices: checked by the host before the factory runs.
const shardkit::OptionSpec kOptions[] = {
    {"hidden_dim", shardkit::OptionType::Int, "64", "Hidden width", "1", nullptr, nullptr},
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return std::make_shared<TinyMlpPolicy>(ctx);
}

}  // namespace

SHARDKIT_PLUGIN(policy, tiny_mlp, "0.1.0", "Two-layer MLP from observation.state to action (MSE)", kOptions, make)
