// The policy interface: a model plus its wrap units, trained on batches of named tensors.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "shardkit/plugin.hpp"

namespace shardkit {

/// A batch: tensors keyed by LeRobot feature names ("observation.state", "action", ...).
using Batch = std::map<std::string, torch::Tensor>;

/// Shapes of a dataset's features, without the batch dimension.
using FeatureShapes = std::map<std::string, std::vector<std::int64_t>>;  // as in PluginContext

/// Frames a policy reads relative to the current one, per feature: {"action": {0, 1, ..., 99}}
/// (ACT's chunk), {"observation.state": {-1, 0}} (one past state). As LeRobot's
/// `*_delta_indices`: a dataset returns such a feature stacked along a new first dimension,
/// plus a bool `<feature>_is_pad` saying which frames fell outside the episode (clamped to its
/// first or last frame).
using DeltaIndices = std::map<std::string, std::vector<std::int64_t>>;

/// What a training forward returns.
struct PolicyOutput {
  /// `return {loss, {}};` for a mean loss, `return {sum, {}, count};` for a summed one.
  PolicyOutput(torch::Tensor loss_ = {}, std::map<std::string, double> metrics_ = {}, torch::Tensor normalizer_ = {})
      : loss(std::move(loss_)), metrics(std::move(metrics_)), normalizer(std::move(normalizer_)) {}
  /// Scalar. Without `normalizer`: the mean over the batch (the trainer averages these over
  /// accumulation micro-steps and ranks). With it: the sum of the per-element losses.
  torch::Tensor loss;
  std::map<std::string, double> metrics;  ///< extra values to log (optional)
  /// Optional scalar: how many elements `loss` sums over (tokens with a label, non-padded
  /// action elements, samples). The trainer then divides the step's summed loss by the global
  /// count of the whole optimizer step (every accumulation micro-step on every rank), so that
  /// training on variable-length data does not depend on how the batch is split.
  torch::Tensor normalizer;
};

/// A policy plugin's object. Its parameter names (named_parameters()) follow the
/// reference implementation's state-dict keys so weights move between worlds.
/// The factory receives the dataset's feature shapes in PluginContext::features.
class Policy : public Plugin, public torch::nn::Module {
 public:
  ~Policy() override;
  /// Training forward: the loss on `batch`.
  virtual PolicyOutput forward(const Batch& batch) = 0;
  /// Inference: the action for the observations in `batch`.
  virtual torch::Tensor select_action(const Batch& batch) = 0;
  /// Class names (Module::name()) of the repeated blocks that become wrap units.
  virtual std::vector<std::string> wrap_modules() const = 0;
  /// Frames relative to the current one that forward() needs (default: none, every feature
  /// of the current frame only). Asked once, after construction, before the first batch.
  virtual DeltaIndices delta_indices() const;
};

/// Number of values in one sample of dataset feature `feature` (the product of its shape),
/// for sizing a policy's layers. Throws ConfigError naming `policy` and the feature when the
/// selected dataset does not provide it.
std::int64_t feature_numel(const PluginContext& ctx, const std::string& feature,
                           const std::string& policy);

}  // namespace shardkit
