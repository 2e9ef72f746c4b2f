// Feature normalization by dataset statistics, with LeRobot's modes (its normalizer/unnormalizer processor steps).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

namespace shardkit {

using Batch = std::map<std::string, torch::Tensor>;  // as in policy.hpp

/// Statistics of a dataset's features, as in LeRobot's meta/stats.json: feature -> statistic
/// ("mean", "std", "min", "max", "q01", "q99", "count", ...) -> float32 CPU tensor shaped like
/// one value of the feature ([n] for vectors, [channels, 1, 1] for cameras).
using FeatureStats = std::map<std::string, std::map<std::string, torch::Tensor>>;

/// LeRobot's FeatureType of a feature, which picks its normalization mode.
enum class FeatureType { State, Visual, Env, Action };

/// LeRobot's NormalizationMode.
enum class NormalizationMode {
  Identity,    ///< left as is
  MeanStd,     ///< (x - mean) / (std + eps)
  MinMax,      ///< [min, max] -> [-1, 1]
  Quantiles,   ///< [q01, q99] -> [-1, 1]
  Quantile10,  ///< [q10, q90] -> [-1, 1]
};

/// The mode of each feature type; a type not listed is IDENTITY. LeRobot's ACT:
/// {{Visual, MeanStd}, {State, MeanStd}, {Action, MeanStd}}.
using NormalizationMapping = std::map<FeatureType, NormalizationMode>;

/// LeRobot's spelling: "STATE", "VISUAL", "ENV", "ACTION".
const char* feature_type_name(FeatureType type);
/// LeRobot's spelling: "IDENTITY", "MEAN_STD", "MIN_MAX", "QUANTILES", "QUANTILE10".
const char* normalization_mode_name(NormalizationMode mode);

/// The type LeRobot gives a dataset feature (dataset_to_policy_features): cameras are VISUAL,
/// "observation.environment_state" ENV, other "observation*" STATE, "action*" ACTION;
/// nullopt for the rest (timestamps, indices), which are never normalized.
std::optional<FeatureType> feature_type_of(const std::string& name, bool camera);

/// Parses a mapping written as LeRobot's config.json writes it, a JSON object such as
/// `{"VISUAL": "MEAN_STD", "STATE": "MIN_MAX", "ACTION": "MEAN_STD"}` ("" = empty). Throws
/// ConfigError naming `flag` and the allowed words on anything else.
NormalizationMapping parse_normalization_mapping(const std::string& text, const std::string& flag);
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

/// An optional capability of a Dataset (shardkit/capability.hpp; datasets without it are
/// unchanged): statistics for normalization.
class DatasetStatistics {
 public:
  static constexpr const char* kCapabilityName = "dataset_statistics";
  static constexpr std::uint32_t kCapabilityVersion = 1;
  virtual ~DatasetStatistics();
  /// Per-feature statistics (LeRobot's meta/stats.json).
  virtual FeatureStats stats() const = 0;
  /// The features that are camera frames ([channels, height, width]): LeRobot's VISUAL type.
  virtual std::vector<std::string> cameras() const = 0;
};

/// An optional capability of a Policy (shardkit/capability.hpp): LeRobot's normalization.
/// With it, and a dataset with DatasetStatistics, the trainer normalizes every batch before
/// forward() (targets included, so the loss is in normalized units), as LeRobot's preprocessor
/// does, and saves LeRobot's processor files with each checkpoint. select_action() then returns
/// normalized values (Normalizer::unnormalize inverts them).
class NormalizedPolicy {
 public:
  static constexpr const char* kCapabilityName = "normalization";
  static constexpr std::uint32_t kCapabilityVersion = 1;
  virtual ~NormalizedPolicy();
  /// How each feature type is normalized (ACT: VISUAL, STATE and ACTION by MEAN_STD).
  virtual NormalizationMapping normalization_mapping() const = 0;
  /// The dataset's statistics, handed over once before training when the dataset has any
  /// (default: ignored), for a policy that also uses them itself.
  virtual void set_stats(const FeatureStats& stats);
};

}  // namespace shardkit
