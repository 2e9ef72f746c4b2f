// Dataset `synthetic`: states drawn from the seed, actions from a fixed random teacher network.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <shardkit/dataset.hpp>
#include <shardkit/error.hpp>
#include <shardkit/plugin.hpp>

namespace {

class SyntheticDataset final : public shardkit::Dataset {
 public:
  explicit SyntheticDataset(const shardkit::PluginContext& ctx) {
    const auto& o = ctx.options;
    const auto n = o.get_int("num_samples");
    state_dim_ = o.get_int("state_dim");
    action_dim_ = o.get_int("action_dim");
    std::int64_t seed = o.get_int("seed");
    if (seed < 0 && ctx.full_config) seed = ctx.full_config->get_int("seed");
    // A private generator: the task depends on the seed only, not on the global RNG.
    auto gen = at::detail::createCPUGenerator(static_cast<std::uint64_t>(seed < 0 ? 0 : seed));
    states_ = at::randn({n, state_dim_}, gen);
    const std::int64_t hidden = 32;
    const auto w1 = at::randn({state_dim_, hidden}, gen) / std::sqrt(static_cast<double>(state_dim_));
    const auto w2 = at::randn({hidden, action_dim_}, gen) / std::sqrt(static_cast<double>(hidden));
    actions_ = at::tanh(states_.matmul(w1)).matmul(w2) +
               o.get_float("noise") * at::randn({n, action_dim_}, gen);
    // The validation split: more samples of the same task, drawn after the training ones so that
    // those do not depend on it.
    const auto v = o.get_int("validation_samples");
    if (o.get_string("split") == "validation") {
      if (v < 1)
        throw shardkit::ConfigError("--dataset.split=validation needs --dataset.validation_samples > 0 (the "
                                    "synthetic dataset's held-out samples)");
      states_ = at::randn({v, state_dim_}, gen);
      actions_ = at::tanh(states_.matmul(w1)).matmul(w2) + o.get_float("noise") * at::randn({v, action_dim_}, gen);
    }
  }

  std::int64_t size() const override { return states_.size(0); }

  shardkit::FeatureShapes features() const override {
    return {{"observation.state", {state_dim_}}, {"action", {action_dim_}}};
  }

  shardkit::Batch get_batch(const std::vector<std::int64_t>& indices) const override {
    for (auto i : indices)
      if (i < 0 || i >= size())
        throw shardkit::RuntimeError("synthetic dataset: index " + std::to_string(i) +
                                     " outside [0, " + std::to_string(size()) + ")");
    const auto index = at::tensor(indices, at::kLong);
    return {{"observation.state", states_.index_select(0, index)},
            {"action", actions_.index_select(0, index)}};
  }

 private:
  std::int64_t state_dim_, action_dim_;
  at::Tensor states_, actions_;
};

const shardkit::OptionSpec kOptions[] = {
    {"num_samples", shardkit::OptionType::Int, "4096", "Samples per epoch", "1", nullptr, nullptr},
    {"state_dim", shardkit::OptionType::Int, "16", "Size of observation.state", "1", nullptr, nullptr},
    {"action_dim", shardkit::OptionType::Int, "4", "Size of action", "1", nullptr, nullptr},
    {"noise", shardkit::OptionType::Float, "0.01", "Std-dev of the noise added to actions", "0", nullptr, nullptr},
    {"seed", shardkit::OptionType::Int, "-1", "Seed of the task (-1 = the run's --seed)", "-1", nullptr, nullptr},
    {"split", shardkit::OptionType::String, "train", "Which samples: train, or validation (validation_samples more of "
     "the same task, for --eval_freq)", nullptr, nullptr, "train|validation"},
    {"validation_samples", shardkit::OptionType::Int, "0", "Samples of the validation split", "0", nullptr, nullptr},
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return std::make_shared<SyntheticDataset>(ctx);
}

}  // namespace

SHARDKIT_PLUGIN(dataset, synthetic, "0.1.0",
                "Deterministic regression task from the seed (observation.state -> action)", kOptions, make)
