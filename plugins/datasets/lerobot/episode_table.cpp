// Reading the episodes table and choosing the episodes a run trains on.
#include "episode_table.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

#include <shardkit/error.hpp>

#include "parquet_file.hpp"

namespace shardkit::lerobot {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> episode_files(const std::string& root) {
  const auto dir = fs::path(root) / "meta" / "episodes";
  std::vector<std::string> files;
  if (fs::is_directory(dir))
    for (const auto& chunk : fs::directory_iterator(dir))
      if (chunk.is_directory())
        for (const auto& f : fs::directory_iterator(chunk.path()))
          if (f.path().extension() == ".parquet") files.push_back(f.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty())
    throw FormatError("no episodes table in " + dir.string() + " (expected chunk-*/file-*.parquet): the dataset is "
                      "incomplete; re-download it");
  return files;
}

void read_file(const std::string& path, const DatasetInfo& info, std::map<std::int64_t, Episode>& out) {
  const ParquetTable table(path);
  const auto index = table.int64_column("episode_index");
  const auto length = table.int64_column("length");
  const auto chunk = table.int64_column("data/chunk_index");
  const auto file = table.int64_column("data/file_index");
  const auto from = table.int64_column("dataset_from_index");
  const auto to = table.int64_column("dataset_to_index");
  // LeRobot's v3.0 writer always stores `tasks`; a table without it groups every episode alike.
  const auto tasks = table.has_column("tasks") ? table.first_string_column("tasks")
                                                : std::vector<std::string>(index.size());
  std::map<std::string, std::vector<std::int64_t>> video_chunk, video_file;
  std::map<std::string, std::vector<double>> video_from, video_to;
  for (const auto* camera : info.cameras()) {
    if (camera->storage != Storage::Video) continue;
    const auto prefix = "videos/" + camera->name + "/";
    video_chunk[camera->name] = table.int64_column(prefix + "chunk_index");
    video_file[camera->name] = table.int64_column(prefix + "file_index");
    video_from[camera->name] = table.double_column(prefix + "from_timestamp");
    video_to[camera->name] = table.double_column(prefix + "to_timestamp");
  }
  for (std::size_t i = 0; i < index.size(); ++i) {
    Episode e{index[i], length[i], chunk[i], file[i], from[i], to[i], {}, tasks[i]};
    // The range is checked before its width is computed: [from, to) with 0 <= from <= to.
    if (e.length < 1 || e.from_index < 0 || e.to_index < e.from_index || e.to_index - e.from_index != e.length)
      throw FormatError(path + ": episode " + std::to_string(e.index) + " has length " + std::to_string(e.length) +
                        " but rows [" + std::to_string(e.from_index) + ", " + std::to_string(e.to_index) + ")");
    for (const auto& [key, chunks] : video_chunk)
      e.videos[key] = {chunks[i], video_file[key][i], video_from[key][i], video_to[key][i]};
    if (!out.emplace(e.index, e).second)
      throw FormatError(path + " lists episode " + std::to_string(e.index) + " twice");
  }
}

/// "[0, 2,5]" or "0,2,5" as integers in order (negatives kept for the caller to judge).
std::vector<std::int64_t> parse_index_list(const std::string& flag, const std::string& text) {
  std::string bare = text;
  bare.erase(std::remove_if(bare.begin(), bare.end(), [](char c) { return c == ' ' || c == '[' || c == ']'; }),
             bare.end());
  std::vector<std::int64_t> out;
  std::size_t start = 0;
  while (start < bare.size()) {
    auto end = bare.find(',', start);
    if (end == std::string::npos) end = bare.size();
    const auto item = bare.substr(start, end - start);
    std::size_t used = 0;
    bool ok = !item.empty();
    try {
      if (ok) out.push_back(std::stoll(item, &used));
    } catch (const std::exception&) {
      ok = false;
    }
    if (!ok || used != item.size())
      throw ConfigError(flag + ": '" + item + "' is not an episode index; write a list such as [0,2,5]");
    start = end + 1;
  }
  return out;
}

std::string list_text(const std::vector<std::int64_t>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

std::string format_fraction(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

}  // namespace

std::map<std::int64_t, Episode> read_episodes(const DatasetInfo& info) {
  std::map<std::int64_t, Episode> episodes;
  for (const auto& path : episode_files(info.root)) read_file(path, info, episodes);
  if (static_cast<std::int64_t>(episodes.size()) != info.total_episodes)
    throw FormatError("meta/info.json of " + info.root + " says " + std::to_string(info.total_episodes) +
                      " episodes, the episodes table under meta/episodes holds " + std::to_string(episodes.size()) +
                      "; the dataset is incomplete or was modified: re-download it");
  return episodes;
}

std::vector<std::int64_t> select_episodes(const std::string& episodes, const std::string& exclude,
                                          const std::map<std::int64_t, Episode>& all, const std::string& root,
                                          std::vector<std::string>& warnings) {
  const auto range = "[0, " + std::to_string(all.size()) + ")";
  std::vector<std::int64_t> chosen;
  if (episodes.empty() || episodes == "all") {
    for (const auto& [index, e] : all) chosen.push_back(index);
  } else {
    const std::string flag = "--dataset.episodes=" + episodes;
    chosen = parse_index_list(flag, episodes);
    std::vector<std::int64_t> negative, repeated;
    std::set<std::int64_t> seen;
    for (const auto value : chosen) {
      if (value < 0) negative.push_back(value);
      if (!seen.insert(value).second) repeated.push_back(value);
    }
    if (!negative.empty())
      throw ConfigError(flag + ": episode indices must be non-negative, got: " + list_text(negative));
    if (!repeated.empty()) {
      std::sort(repeated.begin(), repeated.end());
      repeated.erase(std::unique(repeated.begin(), repeated.end()), repeated.end());
      throw ConfigError(flag + ": episode indices contain duplicates: " + list_text(repeated) +
                        "; name each episode once");
    }
    for (const auto value : chosen)
      if (!all.count(value))
        throw ConfigError(flag + ": the dataset in " + root + " has no episode " + std::to_string(value) +
                          " (it has " + std::to_string(all.size()) + ": 0.." + std::to_string(all.rbegin()->first) +
                          ")");
  }
  if (!exclude.empty()) {
    std::vector<std::int64_t> negative, outside;
    std::set<std::int64_t> dropped;
    for (const auto value : parse_index_list("--dataset.exclude_episodes=" + exclude, exclude)) {
      if (value < 0)
        negative.push_back(value);
      else if (!all.count(value))
        outside.push_back(value);
      else
        dropped.insert(value);
    }
    if (!negative.empty())
      warnings.push_back("--dataset.exclude_episodes: ignoring negative entries " + list_text(negative));
    if (!outside.empty()) {
      std::sort(outside.begin(), outside.end());
      warnings.push_back("--dataset.exclude_episodes: ignoring episode indices outside the dataset range " + range +
                         ": " + list_text(outside));
    }
    chosen.erase(std::remove_if(chosen.begin(), chosen.end(), [&](std::int64_t e) { return dropped.count(e) > 0; }),
                 chosen.end());
  }
  if (chosen.empty())
    throw ConfigError("--dataset.episodes=" + (episodes.empty() ? std::string("(all)") : episodes) +
                      (exclude.empty() ? std::string() : " less --dataset.exclude_episodes=" + exclude) +
                      " selects no episode; name at least one (e.g. [0]) or leave the flags out to train on all " +
                      std::to_string(all.size()));
  return chosen;
}

EpisodeSplit split_episodes(const std::vector<std::int64_t>& base, const std::map<std::int64_t, Episode>& all,
                            double eval_split) {
  EpisodeSplit out;
  if (eval_split <= 0) {
    out.train = base;
    return out;
  }
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::int64_t>> by_task;
  for (const auto e : base) {
    const auto& task = all.at(e).task;
    if (!by_task.count(task)) order.push_back(task);
    by_task[task].push_back(e);
  }
  for (const auto& task : order) {
    const auto& members = by_task.at(task);
    const auto held = static_cast<std::size_t>(std::ceil(static_cast<double>(members.size()) * eval_split));
    const auto cut = members.size() - std::min(held, members.size());
    out.train.insert(out.train.end(), members.begin(), members.begin() + static_cast<std::ptrdiff_t>(cut));
    out.eval.insert(out.eval.end(), members.begin() + static_cast<std::ptrdiff_t>(cut), members.end());
  }
  if (out.train.empty())
    throw ConfigError("--dataset.eval_split=" + format_fraction(eval_split) + " leaves 0 training episodes from " +
                      std::to_string(base.size()) + " total (" + std::to_string(order.size()) +
                      " tasks; each task keeps at least one episode for evaluation); lower it, or select more "
                      "episodes per task");
  return out;
}

}  // namespace shardkit::lerobot
