// LeRobot's normalization vocabulary (statistics, feature types, modes) and the capabilities policies and datasets offer for it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

namespace shardkit {

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

/// Parses a mapping written as LeRobot's config.json writes it, a JSON object such as
/// `{"VISUAL": "MEAN_STD", "STATE": "MIN_MAX", "ACTION": "MEAN_STD"}` ("" = empty). Throws
/// ConfigError naming `flag` and the allowed words on anything else.
NormalizationMapping parse_normalization_mapping(const std::string& text, const std::string& flag);

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
/// normalized values (LeRobot's unnormalizer step inverts them). The normalizing itself is the
/// trainer's (apps/shardkit-train/src/normalizer.hpp): no plugin applies it.
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
