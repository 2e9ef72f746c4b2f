// The EMA shadow: diffusers' EMAModel schedule and update on the tensors the optimizer steps.
#include "ema.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "shardkit/config.hpp"

namespace shardkit::train {
namespace {

/// A value as Python's f-string shows it ("0.0", "-1.0", "0.9999"), for LeRobot's messages.
std::string python_text(double value) { return to_string(Value{value}); }

}  // namespace

EmaOptions EmaOptions::from(const TrainOptions& o) {
  EmaOptions e;
  e.enable = o.ema_enable;
  e.decay = o.ema_decay;
  e.update_after_step = o.ema_update_after_step;
  e.inv_gamma = o.ema_inv_gamma;
  e.power = o.ema_power;
  e.min_decay = o.ema_min_decay;
  e.max_decay = o.ema_max_decay;
  e.use_for_eval = o.ema_use_for_eval;
  return e;
}

std::vector<std::string> ema_option_errors(const EmaOptions& o) {
  std::vector<std::string> errors;
  if (!(0.0 <= o.min_decay && o.min_decay <= o.max_decay && o.max_decay <= 1.0))
    errors.push_back("Expected 0 <= ema.min_decay <= ema.max_decay <= 1, got min_decay=" + python_text(o.min_decay) +
                     " and max_decay=" + python_text(o.max_decay) + ".");
  if (o.inv_gamma <= 0) errors.push_back("ema.inv_gamma must be positive, got " + python_text(o.inv_gamma) + ".");
  if (o.power <= 0) errors.push_back("ema.power must be positive, got " + python_text(o.power) + ".");
  if (o.update_after_step < 0)
    errors.push_back("ema.update_after_step must be >= 0, got " + std::to_string(o.update_after_step) + ".");
  if (o.decay) {
    if (!(0.0 <= *o.decay && *o.decay <= 1.0))
      errors.push_back("ema.decay must be in [0, 1], got " + python_text(*o.decay) + ".");
    // LeRobot compares with the fields' defaults: a clamp left at its default is not "set".
    else if (o.min_decay != EmaOptions{}.min_decay || o.max_decay != EmaOptions{}.max_decay)
      errors.push_back("ema.decay (constant decay) and ema.min_decay/ema.max_decay (schedule clamp) are mutually "
                       "exclusive: set one or the other.");
  }
  return errors;
}

Ema::Ema(EmaOptions options, const std::vector<ParamShard>& params) : options_(std::move(options)) {
  torch::NoGradGuard no_grad;
  for (const auto& p : params)
    shadows_.push_back({p.name, p.param, p.param.detach().clone(at::MemoryFormat::Contiguous), p.layout, p.replicas});
}

double Ema::decay_at(std::int64_t optimization_step) const {
  const auto t = std::max<std::int64_t>(0, optimization_step - options_.update_after_step - 1);
  if (t <= 0) return 0.0;  // before the clamp, as diffusers: the shadow copies the weights
  const double decay = 1.0 - std::pow(1.0 + static_cast<double>(t) / options_.inv_gamma, -options_.power);
  return std::max(std::min(decay, options_.highest()), options_.lowest());
}

void Ema::update() {
  torch::NoGradGuard no_grad;
  ++optimization_step_;  // counted first, then its decay: diffusers' step()
  const double one_minus_decay = 1.0 - decay_at(optimization_step_);
  for (auto& s : shadows_) s.shadow.sub_((s.shadow - s.param).mul_(one_minus_decay));
}

void Ema::restart() {
  torch::NoGradGuard no_grad;
  for (auto& s : shadows_) s.shadow.copy_(s.param);
  optimization_step_ = 0;
}

std::string Ema::describe() const {
  std::int64_t elements = 0;
  for (const auto& s : shadows_) elements += s.shadow.numel();
  return std::to_string(shadows_.size()) + " tensors, " + std::to_string(elements) + " elements on this rank";
}

void Ema::add_shadow(ShardedState& state) const {
  for (const auto& s : shadows_) state.add("ema." + s.name, s.shadow, s.layout, s.replicas);
}

void Ema::add_model(ShardedState& state) const {
  std::map<std::string, const Shadow*> by_name;
  // A tied parameter is stepped once, under its first name; its other names' model entries are
  // views of the same local tensor, and so start at the same address.
  std::map<const void*, const Shadow*> by_data;
  for (const auto& s : shadows_) {
    by_name[s.name] = &s;
    if (s.param.numel() > 0) by_data[s.param.data_ptr()] = &s;
  }
  for (const auto& key : state.keys_with_prefix("model.")) {
    const auto name = key.substr(6);
    const auto& entry = state.tensors.at(key);
    const Shadow* shadow = by_name.count(name) ? by_name.at(name) : nullptr;
    if (shadow == nullptr && !entry.chunks.empty())
      if (const auto it = by_data.find(entry.chunks.front().data.data_ptr());
          it != by_data.end() && it->second->layout.global_shape == entry.global_shape)
        shadow = it->second;
    if (shadow != nullptr)
      state.add("ema." + name, shadow->shadow, shadow->layout, shadow->replicas);
    else
      state.tensors.insert_or_assign("ema." + name, entry);
  }
}

}  // namespace shardkit::train
