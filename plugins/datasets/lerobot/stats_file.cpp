// Reading meta/stats.json into float32 tensors, and LeRobot's ImageNet statistics for cameras.
#include "stats_file.hpp"

#include <filesystem>

#include <ATen/ATen.h>
#include <boost/json/value.hpp>

#include <shardkit/error.hpp>

#include "json_file.hpp"

namespace shardkit::lerobot {
namespace {

/// Appends the numbers of `value` to `out` and records its shape in `shape` (checked equal
/// across siblings); false when it is not a number or a rectangular list of numbers.
bool flatten(const boost::json::value& value, std::size_t depth, std::vector<std::int64_t>& shape,
             std::vector<double>& out) {
  if (value.is_number()) {
    if (depth != shape.size()) return false;
    out.push_back(value.to_number<double>());
    return true;
  }
  const auto* list = value.if_array();
  if (!list) return false;
  const auto n = static_cast<std::int64_t>(list->size());
  if (depth == shape.size()) {
    if (!out.empty()) return false;  // a number seen before at this depth
    shape.push_back(n);
  } else if (depth > shape.size() || shape[depth] != n) {
    return false;
  }
  for (const auto& item : *list)
    if (!flatten(item, depth + 1, shape, out)) return false;
  return true;
}

}  // namespace

std::map<std::string, std::map<std::string, StatValues>> parse_stats(const boost::json::value& doc,
                                                                     const std::string& path) {
  std::map<std::string, std::map<std::string, StatValues>> stats;
  const auto* features = doc.if_object();
  if (!features) throw FormatError(path + " is not a JSON object of features; recompute it with LeRobot");
  for (const auto& [feature, entries] : *features) {
    const auto* by_stat = entries.if_object();
    if (!by_stat)
      throw FormatError(path + ": the entry of feature '" + std::string(feature) +
                        "' is not an object of statistics; recompute it with LeRobot");
    for (const auto& [stat, value] : *by_stat) {
      StatValues values;
      if (!flatten(value, 0, values.shape, values.numbers))
        throw FormatError(path + ": statistic '" + std::string(stat) + "' of feature '" + std::string(feature) +
                          "' is not a number or a rectangular list of numbers; recompute it with LeRobot");
      if (values.shape.empty()) values.shape.push_back(1);  // np.atleast_1d
      stats[std::string(feature)][std::string(stat)] = std::move(values);
    }
  }
  return stats;
}

FeatureStats read_stats(const std::string& root) {
  const auto path = (std::filesystem::path(root) / "meta" / "stats.json").string();
  FeatureStats stats;
  if (!std::filesystem::exists(path)) return stats;
  for (const auto& [feature, by_stat] : parse_stats(read_json_file(path), path))
    for (const auto& [stat, values] : by_stat)
      stats[feature][stat] = at::tensor(values.numbers, at::kDouble).reshape(values.shape).to(at::kFloat);
  return stats;
}

void use_imagenet_stats(FeatureStats& stats, const std::vector<std::string>& cameras) {
  for (const auto& camera : cameras) {
    stats[camera]["mean"] = at::tensor({0.485, 0.456, 0.406}, at::kDouble).reshape({3, 1, 1}).to(at::kFloat);
    stats[camera]["std"] = at::tensor({0.229, 0.224, 0.225}, at::kDouble).reshape({3, 1, 1}).to(at::kFloat);
  }
}

}  // namespace shardkit::lerobot
