// meta/stats.json of a LeRobot dataset: per-feature statistics for normalization.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include <shardkit/normalization.hpp>

namespace shardkit::lerobot {

/// Reads <root>/meta/stats.json as LeRobot's load_stats() does: every statistic of every
/// feature as a float32 tensor shaped by the nesting of its JSON lists (a bare number becomes
/// [1]). A dataset without the file has no statistics (empty). Throws FormatError naming the
/// file, feature and statistic when an entry is not a number or a rectangular list of numbers.
FeatureStats read_stats(const std::string& root);

/// One statistic as meta/stats.json gives it, before it becomes a tensor: its numbers in
/// row-major order and the shape of their nested lists ([1] for a bare number).
struct StatValues {
  std::vector<std::int64_t> shape;
  std::vector<double> numbers;
};

/// The statistics of meta/stats.json document `doc` (read from `path`) as feature -> statistic
/// -> values: what read_stats makes tensors of, with its FormatErrors (the fuzz target's entry).
std::map<std::string, std::map<std::string, StatValues>> parse_stats(const boost::json::value& doc,
                                                                     const std::string& path);

/// LeRobot's `dataset.use_imagenet_stats`: the mean and std of each camera in `cameras`
/// replaced by ImageNet's ([3, 1, 1]; its other statistics kept), as lerobot-train does by default.
void use_imagenet_stats(FeatureStats& stats, const std::vector<std::string>& cameras);

}  // namespace shardkit::lerobot
