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
  std::string task;                            ///< its first task (meta/episodes `tasks`), "" if none
};

/// Reads every meta/episodes/chunk-*/file-*.parquet of the dataset, in file-name order, and
/// checks the episodes against info.json (count, lengths, index ranges). Returned by episode index.
std::map<std::int64_t, Episode> read_episodes(const DatasetInfo& info);

/// LeRobot's resolve_episode_indices: the episodes of `episodes` (as given to --dataset.episodes:
/// "" = every episode, "[0,2,5]" or "0,2,5", kept in the order given) less those of `exclude`
/// (--dataset.exclude_episodes). Throws ConfigError for a malformed list, a negative or
/// duplicate index in `episodes`, an index the dataset lacks there, or an empty result;
/// negative or missing indices in `exclude` are dropped with a line added to `warnings`.
std::vector<std::int64_t> select_episodes(const std::string& episodes, const std::string& exclude,
                                          const std::map<std::int64_t, Episode>& all, const std::string& root,
                                          std::vector<std::string>& warnings);

/// The held-out episodes of --dataset.eval_split, as LeRobot main's make_train_eval_datasets:
/// `base` grouped by first task (groups and members in the order of `base`), the last
/// ceil(size * eval_split) of each group held out for evaluation, the rest trained on.
struct EpisodeSplit {
  std::vector<std::int64_t> train, eval;
};
/// Throws ConfigError when no episode is left to train on.
EpisodeSplit split_episodes(const std::vector<std::int64_t>& base, const std::map<std::int64_t, Episode>& all,
                            double eval_split);

}  // namespace shardkit::lerobot
