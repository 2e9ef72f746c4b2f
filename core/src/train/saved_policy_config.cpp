// A saved policy's config.json, in shardkit's form or LeRobot's, as policy options.
#include "saved_policy_config.hpp"

#include <boost/json.hpp>

#include <set>

#include "shardkit/error.hpp"
#include "shardkit/files.hpp"

namespace shardkit::train {
namespace json = boost::json;

namespace {

/// LeRobot's PreTrainedConfig fields that have no shardkit option.
const std::set<std::string>& lerobot_base_fields() {
  static const std::set<std::string> fields = {"input_features", "output_features", "device", "use_amp",
                                               "use_peft", "push_to_hub", "repo_id", "private", "tags",
                                               "license", "pretrained_path", "pretrained_revision", "path"};
  return fields;
}

}  // namespace

RawConfig read_saved_policy_config(const std::string& path) {
  const auto text = read_text_file(path);
  json::error_code ec;
  auto value = json::parse(text, ec);
  const bool lerobot = !ec && value.is_object() &&
                       (value.as_object().contains("input_features") || value.as_object().contains("output_features"));
  if (!lerobot) {
    auto saved = load_config_file(path);
    saved.erase("path");
    return saved;
  }
  json::object kept;
  for (const auto& [key, v] : value.as_object()) {
    const std::string name(key);
    if (lerobot_base_fields().count(name)) continue;
    if (v.is_null()) kept[key] = "null";
    else if (name == "normalization_mapping" && v.is_object()) kept[key] = json::serialize(v);
    else kept[key] = v;
  }
  return Config::from_json_text(json::serialize(kept), path + " (LeRobot's config.json)");
}

}  // namespace shardkit::train
