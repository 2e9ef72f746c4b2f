// Dynamic loss scaling: unscale, overflow check across ranks, growth and backoff, JSON state.
#include "loss_scaler.hpp"

#include <cmath>

#include <boost/json.hpp>

#include "shardkit/error.hpp"

namespace shardkit::train {

LossScaler::LossScaler(double init_scale, std::int64_t growth_interval)
    : scale_(init_scale), growth_interval_(growth_interval) {}

bool LossScaler::unscale(const std::vector<torch::Tensor>& grads, CommGroup& world) {
  torch::NoGradGuard no_grad;
  bool finite = true;
  for (const auto& g : grads) {
    if (!g.defined()) continue;
    g.mul_(1.0 / scale_);
    if (finite && !torch::isfinite(g).all().item<bool>()) finite = false;
  }
  auto overflow = torch::full({1}, finite ? 0.0f : 1.0f, torch::kFloat32);
  world.all_reduce(overflow, ReduceOp::Max);
  return overflow.item<float>() == 0.0f;
}

void LossScaler::update(bool skipped) {
  if (skipped) {
    scale_ *= backoff_factor_;
    growth_tracker_ = 0;
    ++skipped_;
    return;
  }
  if (++growth_tracker_ >= growth_interval_) {
    scale_ *= growth_factor_;
    growth_tracker_ = 0;
  }
}

std::string LossScaler::state_json() const {
  boost::json::object o;
  o["scale"] = scale_;
  o["growth_factor"] = growth_factor_;
  o["backoff_factor"] = backoff_factor_;
  o["growth_interval"] = growth_interval_;
  o["_growth_tracker"] = growth_tracker_;
  o["skipped_updates"] = skipped_;
  return boost::json::serialize(o) + "\n";
}

void LossScaler::load_json(const std::string& text, const std::string& origin) {
  boost::system::error_code ec;
  const auto value = boost::json::parse(text, ec);
  const auto* o = value.if_object();
  if (ec || o == nullptr || !o->contains("scale") || !o->contains("_growth_tracker"))
    throw FormatError(origin + " is not a loss-scaler state (expected a JSON object with \"scale\" and "
                      "\"_growth_tracker\"); the checkpoint is damaged");
  double scale = 0;
  std::int64_t growth_tracker = 0, skipped = skipped_;
  try {
    scale = o->at("scale").to_number<double>();
    growth_tracker = o->at("_growth_tracker").to_number<std::int64_t>();
    if (o->contains("skipped_updates")) skipped = o->at("skipped_updates").to_number<std::int64_t>();
  } catch (const std::exception& e) {
    throw FormatError(origin + ": a field of the loss-scaler state has the wrong type (" + e.what() + ")");
  }
  // A scale of 0 would zero every gradient and never grow back; a negative one would flip them.
  if (!(scale > 0) || !std::isfinite(scale))
    throw FormatError(origin + ": the loss scale is " + std::to_string(scale) +
                      "; it must be a positive finite number (the checkpoint is damaged)");
  if (growth_tracker < 0 || skipped < 0)
    throw FormatError(origin + ": \"_growth_tracker\" and \"skipped_updates\" must not be negative (the checkpoint "
                      "is damaged)");
  scale_ = scale;
  growth_tracker_ = growth_tracker;
  skipped_ = skipped;
}

}  // namespace shardkit::train
