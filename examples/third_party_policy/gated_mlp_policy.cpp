// Policy `gated_mlp`, a third-party example: gated residual blocks as wrap units, MSE on actions.
#include <torch/torch.h>

#include <shardkit/error.hpp>
#include <shardkit/nn/block.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/policy.hpp>

namespace {

/// The activation applied to the gate branch, chosen by --policy.activation.
torch::Tensor activate(const std::string& name, const torch::Tensor& x) {
  if (name == "silu") return torch::silu(x);
  if (name == "gelu") return torch::gelu(x);
  return torch::relu(x);  // the option's choices are checked by the host before we run
}

/// Pre-norm gated residual block: x + down(act(gate(norm(x))) * up(norm(x))).
/// Deriving from shardkit::nn::Block makes it a wrap unit: backends hook its forward.
class GatedBlockImpl : public shardkit::nn::Block {
 public:
  GatedBlockImpl(std::int64_t dim, std::int64_t expansion, std::string activation)
      : Block("GatedBlock"), activation_(std::move(activation)) {
    norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
    gate = register_module("gate", torch::nn::Linear(dim, dim * expansion));
    up = register_module("up", torch::nn::Linear(dim, dim * expansion));
    down = register_module("down", torch::nn::Linear(dim * expansion, dim));
  }

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x) override {
    const auto h = norm(x);
    return x + down(activate(activation_, gate(h)) * up(h));
  }

 private:
  std::string activation_;
  torch::nn::LayerNorm norm{nullptr};
  torch::nn::Linear gate{nullptr}, up{nullptr}, down{nullptr};
};
TORCH_MODULE(GatedBlock);

/// observation.state -> input_proj -> GatedBlock x num_blocks -> final_norm -> head -> action.
class GatedMlpPolicy final : public shardkit::Policy {
 public:
  explicit GatedMlpPolicy(const shardkit::PluginContext& ctx) {
    const auto& o = ctx.options;
    const auto dim = o.get_int("hidden_dim");
    const auto state_dim = shardkit::feature_numel(ctx, "observation.state", "gated_mlp");
    const auto action_dim = shardkit::feature_numel(ctx, "action", "gated_mlp");
    input_proj = register_module("input_proj", torch::nn::Linear(state_dim, dim));
    blocks = register_module("blocks", torch::nn::Sequential());
    for (std::int64_t i = 0; i < o.get_int("num_blocks"); ++i)
      blocks->push_back(GatedBlock(dim, o.get_int("expansion"), o.get_string("activation")));
    final_norm = register_module("final_norm",
                                 torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
    head = register_module("head", torch::nn::Linear(dim, action_dim));
  }

  shardkit::PolicyOutput forward(const shardkit::Batch& batch) override {
    const auto prediction = predict(batch.at("observation.state"));
    const auto& target = batch.at("action");
    return {torch::mse_loss(prediction, target.reshape(prediction.sizes())), {}};
  }

  torch::Tensor select_action(const shardkit::Batch& batch) override {
    return predict(batch.at("observation.state"));
  }

  // Must match the class name given to Block's constructor above.
  std::vector<std::string> wrap_modules() const override { return {"GatedBlock"}; }

 private:
  torch::Tensor predict(const torch::Tensor& state) {
    return head(final_norm(blocks->forward(input_proj(state.flatten(1)))));
  }

  torch::nn::Linear input_proj{nullptr}, head{nullptr};
  torch::nn::Sequential blocks{nullptr};
  torch::nn::LayerNorm final_norm{nullptr};
};

// Given as --policy.<name>=<value>; the host parses and range-checks them before the
// factory runs, and lists them under --help --policy.type=gated_mlp.
using shardkit::OptionType;
const shardkit::OptionSpec kOptions[] = {
    // name, type, default, help, min, max, choices
    {"hidden_dim", OptionType::Int, "64", "Width of the residual stream", "1", nullptr, nullptr},
    {"num_blocks", OptionType::Int, "2", "Number of gated blocks (wrap units)", "1", nullptr,
     nullptr},
    {"expansion", OptionType::Int, "2", "Hidden width of each block / hidden_dim", "1", "16",
     nullptr},
    {"activation", OptionType::String, "silu", "Activation of the gate branch", nullptr, nullptr,
     "silu|gelu|relu"},
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return std::make_shared<GatedMlpPolicy>(ctx);
}

}  // namespace

SHARDKIT_PLUGIN(policy, gated_mlp, "0.1.0",
                "Gated residual MLP from observation.state to action (MSE)", kOptions, make)
