// Policy `mlp`: input projection, N residual blocks (the wrap units), output head; MSE on actions.
#include <torch/torch.h>

#include <shardkit/capability.hpp>
#include <shardkit/error.hpp>
#include <shardkit/nn/block.hpp>
#include <shardkit/normalization.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/policy.hpp>

namespace {

/// Pre-norm residual MLP block: x + fc2(gelu(fc1(norm(x)))).
class MlpBlockImpl : public shardkit::nn::Block {
 public:
  MlpBlockImpl(std::int64_t dim, std::int64_t expansion) : Block("MlpBlock") {
    norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
    fc1 = register_module("fc1", torch::nn::Linear(dim, dim * expansion));
    fc2 = register_module("fc2", torch::nn::Linear(dim * expansion, dim));
  }

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x) override {
    return x + fc2(torch::gelu(fc1(norm(x))));
  }

 private:
  torch::nn::LayerNorm norm{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(MlpBlock);

class MlpPolicy final : public shardkit::WithCapabilities<shardkit::Policy, shardkit::NormalizedPolicy> {
 public:
  explicit MlpPolicy(const shardkit::PluginContext& ctx) {
    const auto& o = ctx.options;
    const auto dim = o.get_int("hidden_dim");
    const auto state_dim = shardkit::feature_numel(ctx, "observation.state", "mlp");
    const auto action_dim = shardkit::feature_numel(ctx, "action", "mlp");
    input_proj = register_module("input_proj", torch::nn::Linear(state_dim, dim));
    blocks = register_module("blocks", torch::nn::Sequential());
    for (std::int64_t i = 0; i < o.get_int("num_blocks"); ++i)
      blocks->push_back(MlpBlock(dim, o.get_int("expansion")));
    head = register_module("head", torch::nn::Linear(dim, action_dim));
    normalization_ = shardkit::parse_normalization_mapping(o.get_string("normalization_mapping"),
                                                           "--policy.normalization_mapping");
  }

  shardkit::PolicyOutput forward(const shardkit::Batch& batch) override {
    const auto prediction = predict(batch.at("observation.state"));
    const auto target = batch.at("action").reshape(prediction.sizes());
    // The prediction's mean absolute error, logged beside the loss.
    const double mae = (prediction.detach() - target).abs().mean().item<double>();
    return {torch::mse_loss(prediction, target), {{"mae", mae}}};
  }

  torch::Tensor select_action(const shardkit::Batch& batch) override {
    return predict(batch.at("observation.state"));
  }

  std::vector<std::string> wrap_modules() const override { return {"MlpBlock"}; }

  shardkit::NormalizationMapping normalization_mapping() const override { return normalization_; }

 private:
  torch::Tensor predict(const torch::Tensor& state) {
    return head(blocks->forward(input_proj(state.flatten(1))));
  }

  torch::nn::Linear input_proj{nullptr}, head{nullptr};
  torch::nn::Sequential blocks{nullptr};
  shardkit::NormalizationMapping normalization_;
};

const shardkit::OptionSpec kOptions[] = {
    {"hidden_dim", shardkit::OptionType::Int, "128", "Width of the residual stream", "1", nullptr, nullptr},
    {"num_blocks", shardkit::OptionType::Int, "4", "Number of residual blocks (wrap units)", "1", nullptr, nullptr},
    {"expansion", shardkit::OptionType::Int, "2", "Hidden width of each block / hidden_dim", "1", nullptr, nullptr},
    {"normalization_mapping", shardkit::OptionType::String, R"({"STATE": "MEAN_STD", "ACTION": "MEAN_STD"})",
     "Feature type -> LeRobot normalization mode, applied with the dataset's statistics (those with none stay as they are)",
     nullptr, nullptr, nullptr},
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return std::make_shared<MlpPolicy>(ctx);
}

}  // namespace

SHARDKIT_PLUGIN_CLASS(policy, mlp, "0.1.0", "Residual MLP from observation.state to action (MSE)", kOptions, make,
                      0u, MlpPolicy)
