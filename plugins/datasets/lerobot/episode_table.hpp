// The episodes table (meta/episodes/*/*.parquet): where each episode's rows and video frames are.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dataset_info.hpp"

namespace shardkit::lerobot {

/// Where one camera's frames of an episode are: an mp4 and the episode's time span in it.
struct VideoSpan {
  std::int64_t chunk = 0, file = 0;
  double from_timestamp = 0, to_timestamp = 0;
};

struct Episode {
  std::int64_t index = 0;
  std::int64_t length = 0;
  std::int64_t data_chunk = 0, data_file = 0;  ///< the data parquet holding its rows
  std::int64_t from_index = 0, to_index = 0;   ///< global `index` range [from, to)
  std::map<std::string, VideoSpan> videos;     ///< by camera key
};

/// Reads every meta/episodes/chunk-*/file-*.parquet of the dataset, in file-name order, and
/// checks the episodes against info.json (count, lengths, index ranges). Returned by episode index.
std::map<std::int64_t, Episode> read_episodes(const DatasetInfo& info);

/// The episodes to train on: `selection` as given to --dataset.episodes ("" or "all" = all,
/// "[0,2,5]" or "0,2,5"), checked against the table. Throws ConfigError for an empty list, a
/// malformed one, or an episode the dataset lacks.
std::vector<std::int64_t> select_episodes(const std::string& selection,
                                          const std::map<std::int64_t, Episode>& episodes,
                                          const std::string& root);

}  // namespace shardkit::lerobot
