// Reading the episodes table and choosing the episodes a run trains on.
#include "episode_table.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

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
    Episode e{index[i], length[i], chunk[i], file[i], from[i], to[i], {}};
    if (e.length < 1 || e.to_index - e.from_index != e.length)
      throw FormatError(path + ": episode " + std::to_string(e.index) + " has length " + std::to_string(e.length) +
                        " but rows [" + std::to_string(e.from_index) + ", " + std::to_string(e.to_index) + ")");
    for (const auto& [key, chunks] : video_chunk)
      e.videos[key] = {chunks[i], video_file[key][i], video_from[key][i], video_to[key][i]};
    if (!out.emplace(e.index, e).second)
      throw FormatError(path + " lists episode " + std::to_string(e.index) + " twice");
  }
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

std::vector<std::int64_t> select_episodes(const std::string& selection,
                                          const std::map<std::int64_t, Episode>& episodes,
                                          const std::string& root) {
  std::string text = selection;
  text.erase(std::remove_if(text.begin(), text.end(), [](char c) { return c == ' ' || c == '[' || c == ']'; }),
             text.end());
  std::vector<std::int64_t> out;
  if (selection.empty() || selection == "all") {
    for (const auto& [index, e] : episodes) out.push_back(index);
    return out;
  }
  std::set<std::int64_t> seen;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const auto item = text.substr(start, end - start);
    std::size_t used = 0;
    std::int64_t value = -1;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
    }
    if (item.empty() || used != item.size() || value < 0)
      throw ConfigError("--dataset.episodes=" + selection + ": '" + item +
                        "' is not an episode index; write a list such as [0,2,5]");
    if (!episodes.count(value))
      throw ConfigError("--dataset.episodes=" + selection + ": the dataset in " + root + " has no episode " +
                        std::to_string(value) + " (it has " + std::to_string(episodes.size()) + ": 0.." +
                        std::to_string(episodes.rbegin()->first) + ")");
    if (seen.insert(value).second) out.push_back(value);
    start = end + 1;
  }
  if (out.empty())
    throw ConfigError("--dataset.episodes=" + selection + " selects no episode; name at least one (e.g. [0]) or "
                      "leave the flag out to train on all " + std::to_string(episodes.size()));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace shardkit::lerobot
