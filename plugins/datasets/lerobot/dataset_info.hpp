// meta/info.json of a LeRobot dataset: version, fps, features and the file-name templates.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace shardkit::lerobot {

/// The only on-disk format this plugin reads.
inline constexpr const char* kCodebaseVersion = "v3.0";

/// How a feature is stored.
enum class Storage { Column, Image, Video };

/// One entry of info.json's "features".
struct Feature {
  std::string name;                ///< LeRobot's key, e.g. "observation.state"
  std::string dtype;               ///< "float32", "int64", "bool", "image", "video", ...
  std::vector<std::int64_t> shape;  ///< as in info.json (cameras: height, width, channels)
  Storage storage = Storage::Column;
  bool channels_first = false;  ///< cameras whose "names" say (channels, height, width)
  /// The shape of one sample as LeRobot returns it: [] for shape [1] columns (scalars),
  /// [channels, height, width] for cameras, else `shape`.
  std::vector<std::int64_t> sample_shape() const;
};

struct DatasetInfo {
  std::string root;  ///< the dataset folder
  std::string codebase_version;
  double fps = 0;
  std::int64_t total_episodes = 0;
  std::int64_t total_frames = 0;
  std::string data_path;   ///< template, e.g. data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet
  std::string video_path;  ///< template with {video_key}, {chunk_index}, {file_index}
  std::vector<Feature> features;  ///< in info.json's order

  const Feature* find(const std::string& name) const;
  /// Camera features (images and videos), in info.json's order.
  std::vector<const Feature*> cameras() const;
  /// The data parquet file of (chunk, file), as a full path.
  std::string data_file(std::int64_t chunk, std::int64_t file) const;
  /// The mp4 of camera `key` in (chunk, file), as a full path.
  std::string video_file(const std::string& key, std::int64_t chunk, std::int64_t file) const;
};

/// Reads <root>/meta/info.json. Throws ConfigError naming the file when it is missing and
/// when its codebase_version is not v3.0 (naming LeRobot's converter), FormatError when it is
/// malformed.
DatasetInfo read_dataset_info(const std::string& root);
/// The same from info.json's text (read from `path`, the dataset being `root`), checked as
/// read_dataset_info() checks the file: every limit before anything is sized by it.
DatasetInfo parse_dataset_info(const std::string& text, const std::string& root, const std::string& path);

/// The most elements one sample of a feature may have (2^31: a shape whose product is larger
/// is refused when info.json is read, before any table or tensor is sized by it).
inline constexpr std::int64_t kMaxSampleElements = std::int64_t{1} << 31;

/// Fills a LeRobot path template: {name} and {name:0Nd} placeholders from `values`.
std::string fill_path_template(const std::string& pattern, const std::map<std::string, std::string>& text,
                               const std::map<std::string, std::int64_t>& numbers);

}  // namespace shardkit::lerobot
