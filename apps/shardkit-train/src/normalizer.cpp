// LeRobot's normalization modes applied with dataset statistics, in float32 and operation order as LeRobot.
#include "normalizer.hpp"

#include <ATen/ATen.h>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <utility>

#include "shardkit/error.hpp"

namespace shardkit {
namespace {

/// The two statistics a mode reads: (shift, scale) as LeRobot names them.
std::pair<const char*, const char*> stats_of(NormalizationMode mode) {
  switch (mode) {
    case NormalizationMode::MeanStd: return {"mean", "std"};
    case NormalizationMode::MinMax: return {"min", "max"};
    case NormalizationMode::Quantiles: return {"q01", "q99"};
    case NormalizationMode::Quantile10: return {"q10", "q90"};
    case NormalizationMode::Identity: break;
  }
  return {nullptr, nullptr};
}

std::string shape_text(at::IntArrayRef shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// `stat` shaped to broadcast against values of `feature` (LeRobot reshapes flat camera stats
/// [C] to [C, 1, 1]); ConfigError when it cannot.
at::Tensor fitted(const at::Tensor& stat, const Normalizer::Feature& feature, const std::string& name,
                  const std::string& stat_name) {
  const auto bad = [&] {
    return ConfigError("the dataset statistic '" + stat_name + "' of feature '" + name + "' has shape " +
                       shape_text(stat.sizes()) + ", which does not fit the feature's shape " +
                       shape_text(feature.shape) + "; recompute the dataset's meta/stats.json");
  };
  if (feature.type == FeatureType::Visual) {
    if (feature.shape.size() != 3) throw bad();
    const auto channels = feature.shape[0];
    if (stat.dim() == 1 && stat.size(0) == channels) return stat.reshape({channels, 1, 1});
    if (stat.dim() == 3 && stat.size(0) == channels && stat.size(1) == 1 && stat.size(2) == 1) return stat;
    throw bad();
  }
  std::int64_t numel = 1;
  for (const auto d : feature.shape) numel *= d;
  if (stat.numel() != numel) throw bad();
  return stat.reshape(feature.shape);
}

}  // namespace

std::optional<FeatureType> feature_type_of(const std::string& name, bool camera) {
  if (camera) return FeatureType::Visual;
  if (name == "observation.environment_state") return FeatureType::Env;
  if (name.rfind("observation", 0) == 0) return FeatureType::State;
  if (name.rfind("action", 0) == 0) return FeatureType::Action;
  return std::nullopt;
}

std::string normalization_mapping_json(const NormalizationMapping& mapping) {
  boost::json::object o;
  for (const auto& [type, mode] : mapping) o[feature_type_name(type)] = normalization_mode_name(mode);
  return boost::json::serialize(o);
}

Normalizer::Normalizer(std::map<std::string, Feature> features, NormalizationMapping mapping, FeatureStats stats,
                       double eps)
    : features_(std::move(features)), mapping_(std::move(mapping)), stats_(std::move(stats)), eps_(eps) {
  for (const auto& [name, feature] : features_) {
    const auto mode = mode_of(name);
    if (mode == NormalizationMode::Identity) continue;
    const auto [shift, scale] = stats_of(mode);
    const auto& have = stats_.at(name);
    for (const auto* needed : {shift, scale}) {
      const auto it = have.find(needed);
      if (it == have.end())
        throw ConfigError("feature '" + name + "' (" + feature_type_name(feature.type) + ") is normalized with " +
                          normalization_mode_name(mode) + ", which needs the statistic '" + needed +
                          "', and the dataset's statistics of it have none; recompute the dataset's "
                          "meta/stats.json or choose another mode in the policy's normalization_mapping");
      fitted(it->second, feature, name, needed);  // throws when the shape does not fit
    }
  }
}

NormalizationMode Normalizer::mode_of(const std::string& feature) const {
  const auto f = features_.find(feature);
  if (f == features_.end() || !stats_.count(feature)) return NormalizationMode::Identity;
  const auto m = mapping_.find(f->second.type);
  return m == mapping_.end() ? NormalizationMode::Identity : m->second;
}

std::vector<std::string> Normalizer::unnormalized() const {
  std::vector<std::string> out;
  for (const auto& [name, feature] : features_) {
    const auto m = mapping_.find(feature.type);
    if (m != mapping_.end() && m->second != NormalizationMode::Identity && !stats_.count(name)) out.push_back(name);
  }
  return out;
}

bool Normalizer::active() const {
  for (const auto& [name, feature] : features_)
    if (mode_of(name) != NormalizationMode::Identity) return true;
  return false;
}

at::Tensor Normalizer::apply(const std::string& name, const at::Tensor& value, bool inverse) const {
  const auto mode = mode_of(name);
  if (mode == NormalizationMode::Identity) return value;
  const auto& feature = features_.at(name);
  const auto rank = static_cast<std::int64_t>(feature.shape.size());
  bool fits = value.dim() >= rank;
  for (std::int64_t k = 0; fits && k < rank; ++k) fits = value.size(value.dim() - rank + k) == feature.shape[k];
  if (!fits)
    throw RuntimeError("cannot normalize feature '" + name + "': a tensor of shape " + shape_text(value.sizes()) +
                       " does not end in the feature's shape " + shape_text(feature.shape));
  const auto x = value.is_floating_point() ? value : value.to(at::kFloat);
  const auto [shift_name, scale_name] = stats_of(mode);
  const auto& have = stats_.at(name);
  const auto stat = [&](const char* s) { return fitted(have.at(s), feature, name, s).to(x.options()); };
  const auto shift = stat(shift_name), scale = stat(scale_name);
  if (mode == NormalizationMode::MeanStd) return inverse ? x * scale + shift : (x - shift) / (scale + eps_);
  // MIN_MAX and the quantile modes map [shift, scale] to [-1, 1]; a zero range becomes eps.
  auto range = scale - shift;
  range = at::where(range == 0, at::scalar_tensor(eps_, x.options()), range);
  if (mode == NormalizationMode::MinMax) return inverse ? (x + 1) / 2 * range + shift : 2 * (x - shift) / range - 1;
  return inverse ? (x + 1.0) * range / 2.0 + shift : 2.0 * (x - shift) / range - 1.0;
}

void Normalizer::normalize(Batch& batch) const {
  for (auto& [name, tensor] : batch)
    if (features_.count(name)) tensor = apply(name, tensor, /*inverse=*/false);
}

at::Tensor Normalizer::unnormalize(const std::string& feature, const at::Tensor& value) const {
  return apply(feature, value, /*inverse=*/true);
}

}  // namespace shardkit
