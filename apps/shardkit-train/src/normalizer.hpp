// The trainer's normalization of batches by dataset statistics (LeRobot's normalizer/unnormalizer processor steps).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

#include "shardkit/normalization.hpp"

namespace shardkit {

using Batch = std::map<std::string, torch::Tensor>;  // as in policy.hpp

/// The type LeRobot gives a dataset feature (dataset_to_policy_features): cameras are VISUAL,
/// "observation.environment_state" ENV, other "observation*" STATE, "action*" ACTION;
/// nullopt for the rest (timestamps, indices), which are never normalized.
std::optional<FeatureType> feature_type_of(const std::string& name, bool camera);

/// The JSON object text parse_normalization_mapping() reads.
std::string normalization_mapping_json(const NormalizationMapping& mapping);

/// Normalizes the features of a batch with dataset statistics, exactly as LeRobot's
/// NormalizerProcessorStep does (float32 maths, eps 1e-8, a zero range replaced by eps), and
/// inverts it for a policy's outputs as its UnnormalizerProcessorStep does. Example:
/// \code
///   Normalizer n({{"action", {FeatureType::Action, {6}}}}, {{FeatureType::Action, NormalizationMode::MeanStd}},
///                dataset.stats());
///   n.normalize(batch);                                      // batch["action"] is now standardised
///   auto action = n.unnormalize("action", policy.select_action(obs));
/// \endcode
class Normalizer {
 public:
  struct Feature {
    FeatureType type;
    std::vector<std::int64_t> shape;  ///< one value, without batch or time dimensions
  };

  /// Normalizes nothing.
  Normalizer() = default;
  /// Throws ConfigError naming the feature when a feature whose mode is not IDENTITY has
  /// statistics without the ones its mode needs, or of a shape that does not fit it. A
  /// feature without any statistics is left as is, as LeRobot leaves it (see unnormalized()).
  Normalizer(std::map<std::string, Feature> features, NormalizationMapping mapping, FeatureStats stats,
             double eps = 1e-8);

  /// Normalizes, in place, every feature of `batch` this normalizer changes; other keys
  /// (`*_is_pad`, indices) stay. Feature tensors may have any leading (batch, time) dimensions.
  void normalize(Batch& batch) const;
  /// The inverse for one feature's tensor (e.g. a predicted action).
  torch::Tensor unnormalize(const std::string& feature, const torch::Tensor& value) const;

  /// The mode applied to `feature` (IDENTITY when none or when it has no statistics).
  NormalizationMode mode_of(const std::string& feature) const;
  /// Features whose mode is not IDENTITY but that have no statistics, so stay as they are.
  std::vector<std::string> unnormalized() const;
  /// Whether any feature is changed at all.
  bool active() const;

  const std::map<std::string, Feature>& features() const { return features_; }
  const NormalizationMapping& mapping() const { return mapping_; }
  const FeatureStats& stats() const { return stats_; }
  double eps() const { return eps_; }

 private:
  torch::Tensor apply(const std::string& feature, const torch::Tensor& value, bool inverse) const;
  std::map<std::string, Feature> features_;
  NormalizationMapping mapping_;
  FeatureStats stats_;
  double eps_ = 1e-8;
};

}  // namespace shardkit
