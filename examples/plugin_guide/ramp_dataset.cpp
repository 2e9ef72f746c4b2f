// Dataset `ramp`: the dataset plugin of docs/plugins.md (samples computed from their index).
#include <torch/torch.h>

#include <shardkit/dataset.hpp>
#include <shardkit/plugin.hpp>

namespace {

/// Sample i: observation.state = sin(i/10 + k) for k = 0..3, action = the two sums of its halves.
/// A real dataset reads files instead; get_batch() must stay deterministic (exact resume).
class RampDataset final : public shardkit::Dataset {
 public:
  explicit RampDataset(const shardkit::PluginContext& ctx) : size_(ctx.options.get_int("num_samples")) {}

  std::int64_t size() const override { return size_; }

  // Shapes without the batch dimension, keyed by LeRobot's feature names; policies size
  // their layers from these (feature_numel).
  shardkit::FeatureShapes features() const override {
    return {{"observation.state", {4}}, {"action", {2}}};
  }

  // Called from the loader's thread, a few batches ahead of training, with indices the
  // sampler chose for this rank; return CPU tensors stacked along a new first dimension.
  shardkit::Batch get_batch(const std::vector<std::int64_t>& indices) const override {
    const auto index = torch::tensor(indices).to(torch::kFloat32).unsqueeze(1);
    const auto state = torch::sin(index / 10.0 + torch::arange(4, torch::kFloat32));
    const auto action = torch::stack({state.narrow(1, 0, 2).sum(1), state.narrow(1, 2, 2).sum(1)}, 1);
    return {{"observation.state", state}, {"action", action}};
  }

 private:
  std::int64_t size_;
};

const shardkit::OptionSpec kOptions[] = {
    {"num_samples", shardkit::OptionType::Int, "512", "Samples per epoch", "1", nullptr, nullptr},
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return std::make_shared<RampDataset>(ctx);
}

}  // namespace

SHARDKIT_PLUGIN(dataset, ramp, "0.1.0", "sin ramps: 4 state values, 2 actions", kOptions, make)
