// Reading meta/info.json: the codebase version check, features and file-name templates.
#include "dataset_info.hpp"

#include "shardkit/files.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <filesystem>

#include <shardkit/error.hpp>

#include "json_file.hpp"

namespace shardkit::lerobot {
namespace fs = std::filesystem;

std::vector<std::int64_t> Feature::sample_shape() const {
  if (storage != Storage::Column) {
    if (shape.size() != 3)
      throw FormatError("camera feature '" + name + "' has shape of " + std::to_string(shape.size()) +
                        " dimensions in meta/info.json; expected (height, width, channels)");
    return channels_first ? shape : std::vector<std::int64_t>{shape[2], shape[0], shape[1]};
  }
  if (shape.size() == 1 && shape[0] == 1) return {};
  return shape;
}

const Feature* DatasetInfo::find(const std::string& name) const {
  for (const auto& f : features)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<const Feature*> DatasetInfo::cameras() const {
  std::vector<const Feature*> out;
  for (const auto& f : features)
    if (f.storage != Storage::Column) out.push_back(&f);
  return out;
}

std::string DatasetInfo::data_file(std::int64_t chunk, std::int64_t file) const {
  return (fs::path(root) / fill_path_template(data_path, {}, {{"chunk_index", chunk}, {"file_index", file}}))
      .string();
}

std::string DatasetInfo::video_file(const std::string& key, std::int64_t chunk, std::int64_t file) const {
  return (fs::path(root) / fill_path_template(video_path, {{"video_key", key}},
                                              {{"chunk_index", chunk}, {"file_index", file}}))
      .string();
}

std::string fill_path_template(const std::string& pattern, const std::map<std::string, std::string>& text,
                               const std::map<std::string, std::int64_t>& numbers) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size();) {
    if (pattern[i] != '{') {
      out += pattern[i++];
      continue;
    }
    const auto close = pattern.find('}', i);
    if (close == std::string::npos) throw FormatError("unterminated '{' in path template " + pattern);
    const auto field = pattern.substr(i + 1, close - i - 1);
    const auto colon = field.find(':');
    const auto name = field.substr(0, colon);
    if (const auto t = text.find(name); t != text.end()) {
      out += t->second;
    } else if (const auto n = numbers.find(name); n != numbers.end()) {
      int width = 0;  // {name:0Nd}: N digits, at most 20 (an int64's)
      if (colon != std::string::npos) {
        const auto format = field.substr(colon + 1);
        if (format.size() < 3 || format.size() > 4 || format.front() != '0' || format.back() != 'd' ||
            format.find_first_not_of("0123456789", 1) != format.size() - 1 ||
            (width = std::stoi(format.substr(1, format.size() - 2))) > 20)
          throw FormatError("path template " + pattern + ": {" + field + "} is not a number format LeRobot writes "
                            "({" + name + ":03d})");
      }
      char buffer[32];
      std::snprintf(buffer, sizeof(buffer), "%0*lld", width, static_cast<long long>(n->second));
      out += buffer;
    } else {
      throw FormatError("path template " + pattern + " names {" + name + "}, which LeRobot v3.0 does not define");
    }
    i = close + 1;
  }
  return out;
}

namespace {

std::vector<std::int64_t> read_shape(const boost::json::value& v, const std::string& where) {
  std::vector<std::int64_t> shape;
  const auto* array = v.if_array();
  if (!array) throw FormatError(where + ": \"shape\" is not a list");
  std::int64_t elements = 1;
  for (const auto& d : *array) {
    if (!d.is_int64() || d.as_int64() < 1) throw FormatError(where + ": \"shape\" holds a non-positive or non-integer size");
    // Checked as it grows (no overflow): a sample is a tensor each frame of the dataset holds.
    if (d.as_int64() > kMaxSampleElements / elements)
      throw FormatError(where + ": \"shape\" " + boost::json::serialize(v) + " has more than 2^31 elements per sample");
    elements *= d.as_int64();
    shape.push_back(d.as_int64());
  }
  return shape;
}

std::string string_member(const boost::json::value& object, const std::string& key, const std::string& path) {
  const auto& v = json_member(object, key, path);
  if (!v.is_string()) throw FormatError(path + ": \"" + key + "\" is not a string");
  return std::string(v.as_string());
}

std::int64_t int_member(const boost::json::value& object, const std::string& key, const std::string& path) {
  const auto& v = json_member(object, key, path);
  if (!v.is_int64()) throw FormatError(path + ": \"" + key + "\" is not an integer");
  return v.as_int64();
}

}  // namespace

DatasetInfo read_dataset_info(const std::string& root) {
  const auto path = (fs::path(root) / "meta" / "info.json").string();
  // Not a LeRobot dataset, or one of a version shardkit does not read: the wrong folder to name
  // (ConfigError, exit 2); a damaged info.json is a FormatError (exit 1).
  if (!fs::exists(path))
    throw ConfigError("no meta/info.json in " + root + ": this folder is not a LeRobot dataset (expected " +
                      path + "; a dataset downloaded with `hf download --repo-type dataset <repo_id> "
                      "--local-dir <folder>` or recorded with LeRobot has it)");
  return parse_dataset_info(read_text_file(path), root, path);
}

DatasetInfo parse_dataset_info(const std::string& text, const std::string& root, const std::string& path) {
  const auto json = parse_json_text(text, path);
  if (!json.is_object()) throw FormatError(path + " is not a JSON object");
  DatasetInfo info;
  info.root = root;
  info.codebase_version = string_member(json, "codebase_version", path);
  if (info.codebase_version != kCodebaseVersion)
    throw ConfigError(path + " says codebase_version \"" + info.codebase_version + "\"; shardkit reads " +
                      kCodebaseVersion + " only. Convert the dataset with LeRobot's converter "
                      "(python -m lerobot.datasets.v30.convert_dataset_v21_to_v30 --repo-id=<repo_id>) first");
  const auto& fps = json_member(json, "fps", path);
  if (!fps.is_number() || fps.to_number<double>() <= 0) throw FormatError(path + ": \"fps\" is not a positive number");
  info.fps = fps.to_number<double>();
  info.total_episodes = int_member(json, "total_episodes", path);
  info.total_frames = int_member(json, "total_frames", path);
  info.data_path = string_member(json, "data_path", path);
  if (const auto* obj = json.as_object().if_contains("video_path"); obj && obj->is_string())
    info.video_path = std::string(obj->as_string());
  for (const auto* name : {"data_path", "video_path"})
    if (const auto& pattern = std::string(name) == "data_path" ? info.data_path : info.video_path;
        !pattern.empty() && !stays_inside(pattern))  // datasets without videos have no video_path
      throw FormatError(path + ": \"" + name + "\" is '" + pattern + "', which leads outside the dataset folder; " +
                        "LeRobot's paths are relative to it and stay in it (\"" + name + "\": \"" +
                        (std::string(name) == "data_path" ? "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
                                                          : "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4") +
                        "\")");
  const auto& features = json_member(json, "features", path);
  if (!features.is_object()) throw FormatError(path + ": \"features\" is not an object");
  for (const auto& [key, value] : features.as_object()) {
    Feature f;
    f.name = std::string(key);
    const auto where = path + ", feature '" + f.name + "'";
    f.dtype = string_member(value, "dtype", where);
    f.shape = read_shape(json_member(value, "shape", where), where);
    if (f.dtype == "video") f.storage = Storage::Video;
    if (f.dtype == "image") f.storage = Storage::Image;
    if (const auto* names = value.as_object().if_contains("names"); names && names->is_array() &&
        !names->as_array().empty() && names->as_array()[0] == "channels")
      f.channels_first = true;
    if (f.storage == Storage::Video && info.video_path.empty())
      throw FormatError(path + " has the video feature '" + f.name + "' but no \"video_path\"");
    // A video feature's name becomes a folder of video_path ({video_key}).
    if (f.storage == Storage::Video && (f.name.find('/') != std::string::npos || f.name == ".." || f.name == "."))
      throw FormatError(where + ": a video feature's name names its folder under videos/, and this one leads "
                        "outside it; rename the feature");
    info.features.push_back(std::move(f));
  }
  return info;
}

}  // namespace shardkit::lerobot
