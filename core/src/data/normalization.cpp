// LeRobot's spellings of feature types and normalization modes, and the mapping parsed from a policy option's JSON.
#include "shardkit/normalization.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <optional>

#include "shardkit/error.hpp"

namespace shardkit {
namespace {

constexpr FeatureType kTypes[] = {FeatureType::State, FeatureType::Visual, FeatureType::Env, FeatureType::Action};
constexpr NormalizationMode kModes[] = {NormalizationMode::Identity, NormalizationMode::MeanStd,
                                        NormalizationMode::MinMax, NormalizationMode::Quantiles,
                                        NormalizationMode::Quantile10};

}  // namespace

DatasetStatistics::~DatasetStatistics() = default;
NormalizedPolicy::~NormalizedPolicy() = default;
void NormalizedPolicy::set_stats(const FeatureStats&) {}

const char* feature_type_name(FeatureType type) {
  switch (type) {
    case FeatureType::State: return "STATE";
    case FeatureType::Visual: return "VISUAL";
    case FeatureType::Env: return "ENV";
    case FeatureType::Action: return "ACTION";
  }
  return "?";
}

const char* normalization_mode_name(NormalizationMode mode) {
  switch (mode) {
    case NormalizationMode::Identity: return "IDENTITY";
    case NormalizationMode::MeanStd: return "MEAN_STD";
    case NormalizationMode::MinMax: return "MIN_MAX";
    case NormalizationMode::Quantiles: return "QUANTILES";
    case NormalizationMode::Quantile10: return "QUANTILE10";
  }
  return "?";
}

NormalizationMapping parse_normalization_mapping(const std::string& text, const std::string& flag) {
  NormalizationMapping mapping;
  if (text.find_first_not_of(" \t\n") == std::string::npos) return mapping;
  const auto usage = std::string(" (write a JSON object of feature types STATE, VISUAL, ENV, ACTION to modes "
                                 "IDENTITY, MEAN_STD, MIN_MAX, QUANTILES, QUANTILE10, e.g. "
                                 "'{\"STATE\": \"MEAN_STD\", \"ACTION\": \"MIN_MAX\"}')");
  boost::json::value doc;
  try {
    doc = boost::json::parse(text);
  } catch (const std::exception&) {
    throw ConfigError(flag + "=" + text + " is not valid JSON" + usage);
  }
  if (!doc.is_object()) throw ConfigError(flag + "=" + text + " is not a JSON object" + usage);
  for (const auto& [key, value] : doc.as_object()) {
    std::optional<FeatureType> type;
    for (const auto t : kTypes)
      if (key == feature_type_name(t)) type = t;
    if (!type) throw ConfigError(flag + ": unknown feature type '" + std::string(key) + "'" + usage);
    std::optional<NormalizationMode> mode;
    if (value.is_string())
      for (const auto m : kModes)
        if (value.as_string() == normalization_mode_name(m)) mode = m;
    if (!mode)
      throw ConfigError(flag + ": feature type " + std::string(key) + " has the mode " +
                        boost::json::serialize(value) + ", which is none of the normalization modes" + usage);
    mapping[*type] = *mode;
  }
  return mapping;
}

}  // namespace shardkit
