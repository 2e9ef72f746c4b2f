// The EMA shadow: diffusers' decay schedule and update, LeRobot's option checks, and ema_state.pt
// as LibTorch reads it back.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's (c10 defines one too)

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../../../apps/shardkit-train/src/ema.hpp"
#include "../../../apps/shardkit-train/src/ema_state_file.hpp"

using shardkit::ParamShard;
using shardkit::Replicas;
using shardkit::ShardedState;
using shardkit::ShardLayout;
using shardkit::train::Ema;
using shardkit::train::EmaOptions;
using shardkit::train::ema_option_errors;

namespace {

ParamShard whole(const std::string& name, const torch::Tensor& t) {
  return {name, t, ShardLayout::whole(t.sizes().vec()), Replicas::none()};
}

/// diffusers 0.42's EMAModel.get_decay with use_ema_warmup=True, transcribed.
double diffusers_decay(std::int64_t optimization_step, const EmaOptions& o) {
  const auto step = std::max<std::int64_t>(0, optimization_step - o.update_after_step - 1);
  if (step <= 0) return 0.0;
  double decay = 1 - std::pow(1 + static_cast<double>(step) / o.inv_gamma, -o.power);
  decay = std::min(decay, o.highest());
  return std::max(decay, o.lowest());
}

}  // namespace

TEST_CASE("decay_at is diffusers' warmup schedule, 0 before it starts and clamped after", "[train][ema]") {
  EmaOptions o;
  o.update_after_step = 2;
  o.power = 2.0 / 3.0;
  o.min_decay = 0.4;
  o.max_decay = 0.5;
  Ema ema(o, {});
  for (std::int64_t k = 0; k <= 20; ++k) {
    INFO("optimization step " << k);
    CHECK(ema.decay_at(k) == diffusers_decay(k, o));
  }
  CHECK(ema.decay_at(3) == 0.0);     // t = 0: not raised to min_decay
  CHECK(ema.decay_at(4) == 0.4);     // t = 1: 1 - 2^(-2/3) = 0.37, raised to min_decay
  CHECK(ema.decay_at(1000) == 0.5);  // lowered to max_decay

  EmaOptions constant;
  constant.decay = 0.99;
  Ema fixed(constant, {});
  CHECK(fixed.decay_at(1) == 0.0);  // the first update copies the weights, as diffusers does
  CHECK(fixed.decay_at(2) == 0.99);
  CHECK(fixed.decay_at(50) == 0.99);
}

TEST_CASE("update counts first, then moves the shadow by (1 - decay) towards the weights", "[train][ema]") {
  auto w = torch::tensor({1.0f, -2.0f, 3.0f});
  const auto start = w.clone();
  EmaOptions o;  // power 0.75, inv_gamma 1
  Ema ema(o, {whole("w", w)});
  ShardedState state;
  ema.add_shadow(state);  // views of the shadow
  w.copy_(torch::tensor({2.0f, 0.0f, 1.0f}));
  ema.update();  // update 1: decay 0, the shadow takes the weights (through diffusers' in-place form)
  CHECK(ema.optimization_step() == 1);
  CHECK(torch::equal(state.tensors.at("ema.w").chunks.at(0).data, start - (start - w) * 1.0));

  const auto before = state.tensors.at("ema.w").chunks.at(0).data.clone();
  w.copy_(torch::tensor({0.0f, 4.0f, -1.0f}));
  ema.update();  // update 2: t = 1, decay 1 - 2^-0.75
  const double decay = 1.0 - std::pow(2.0, -0.75);
  CHECK(ema.decay_at(2) == decay);
  CHECK(torch::equal(state.tensors.at("ema.w").chunks.at(0).data, before - (before - w) * (1.0 - decay)));

  ema.restart();
  CHECK(ema.optimization_step() == 0);
  CHECK(torch::equal(state.tensors.at("ema.w").chunks.at(0).data, w));
}

TEST_CASE("add_model gives every model entry an ema. twin: shadows for parameters, the rest as it is",
          "[train][ema]") {
  auto w = torch::ones({2, 2});
  auto running = torch::zeros({2});
  Ema ema(EmaOptions{}, {whole("layer.weight", w)});
  ShardedState state;
  state.add("model.layer.weight", w, ShardLayout::whole({2, 2}), Replicas::none());
  state.add("model.tied.weight", w, ShardLayout::whole({2, 2}), Replicas::none());  // the same tensor
  state.add("model.layer.running", running, ShardLayout::whole({2}), Replicas::none());
  ema.add_model(state);
  REQUIRE(state.keys_with_prefix("ema.") ==
          std::vector<std::string>{"ema.layer.running", "ema.layer.weight", "ema.tied.weight"});
  w.fill_(5.0);  // the weights move; the shadow does not
  CHECK(state.tensors.at("ema.layer.weight").chunks.at(0).data.eq(1.0).all().item<bool>());
  CHECK(state.tensors.at("ema.tied.weight").chunks.at(0).data.eq(1.0).all().item<bool>());
  running.fill_(3.0);  // a buffer's twin is the buffer itself
  CHECK(state.tensors.at("ema.layer.running").chunks.at(0).data.eq(3.0).all().item<bool>());
}

TEST_CASE("the options are refused in LeRobot's words", "[train][ema]") {
  const auto one = [](auto change) {
    EmaOptions o;
    change(o);
    const auto errors = ema_option_errors(o);
    REQUIRE(errors.size() == 1);
    return errors.front();
  };
  CHECK(ema_option_errors(EmaOptions{}).empty());
  CHECK(one([](EmaOptions& o) {
          o.min_decay = 0.5;
          o.max_decay = 0.4;
        }) ==
        "Expected 0 <= ema.min_decay <= ema.max_decay <= 1, got min_decay=0.5 and max_decay=0.4.");
  CHECK(one([](EmaOptions& o) { o.max_decay = 1.5; }) ==
        "Expected 0 <= ema.min_decay <= ema.max_decay <= 1, got min_decay=0.0 and max_decay=1.5.");
  CHECK(one([](EmaOptions& o) { o.inv_gamma = 0; }) == "ema.inv_gamma must be positive, got 0.0.");
  CHECK(one([](EmaOptions& o) { o.power = -1; }) == "ema.power must be positive, got -1.0.");
  CHECK(one([](EmaOptions& o) { o.update_after_step = -1; }) == "ema.update_after_step must be >= 0, got -1.");
  CHECK(one([](EmaOptions& o) { o.decay = 1.5; }) == "ema.decay must be in [0, 1], got 1.5.");
  CHECK(one([](EmaOptions& o) {
          o.decay = 0.99;
          o.min_decay = 0.1;
        }) ==
        "ema.decay (constant decay) and ema.min_decay/ema.max_decay (schedule clamp) are mutually exclusive: "
        "set one or the other.");
  EmaOptions constant;
  constant.decay = 0.99;  // the clamps at their defaults: not "set"
  CHECK(ema_option_errors(constant).empty());
}

TEST_CASE("ema_state.pt holds diffusers' state_dict in plain types", "[train][ema]") {
  EmaOptions o;
  o.update_after_step = 3;
  const auto bytes = shardkit::train::ema_state_pt(o, 7, {torch::ones({2, 3}), torch::zeros({4})});
  const auto value = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  REQUIRE(value.isGenericDict());
  const auto dict = value.toGenericDict();
  std::vector<std::string> keys;
  for (const auto& item : dict) keys.push_back(item.key().toStringRef());
  CHECK(keys == std::vector<std::string>{"decay", "min_decay", "optimization_step", "update_after_step",
                                         "use_ema_warmup", "inv_gamma", "power", "shadow_params"});
  CHECK(dict.at("decay").toDouble() == 0.9999);
  CHECK(dict.at("min_decay").isDouble());
  CHECK(dict.at("optimization_step").toInt() == 7);
  CHECK(dict.at("update_after_step").toInt() == 3);
  CHECK(dict.at("use_ema_warmup").toBool());
  CHECK(dict.at("power").toDouble() == 0.75);
  const auto shadow = dict.at("shadow_params").toListRef();
  REQUIRE(shadow.size() == 2);
  CHECK(torch::equal(shadow[0].toTensor(), torch::ones({2, 3})));
  // No TorchScript type tags: torch.load(weights_only=True) refuses their globals.
  CHECK(bytes.find("restore_type_tag") == std::string::npos);
  CHECK(bytes.find("build_tensorlist") == std::string::npos);
}
