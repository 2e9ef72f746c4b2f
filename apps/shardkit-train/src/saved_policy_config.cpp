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

/// transformers' PretrainedConfig fields that describe the file, not the model.
const std::set<std::string>& hf_base_fields() {
  static const std::set<std::string> fields = {"architectures", "model_type", "torch_dtype", "dtype",
                                               "transformers_version", "_name_or_path", "use_cache", "path"};
  return fields;
}

/// A transformers config.json ("model_type", no "type"): the policy named by model_type, and
/// each field as the option of that name; a null is the field's default (left out), lists and
/// objects stay JSON text.
RawConfig hf_config(const json::object& object, const std::string& path) {
  json::object kept;
  const auto& type = object.at("model_type");
  if (!type.is_string()) throw ConfigError(path + ": \"model_type\" is not a string");
  kept["type"] = type;
  for (const auto& [key, v] : object) {
    const std::string name(key);
    if (hf_base_fields().count(name) || v.is_null()) continue;
    if (v.is_object() || v.is_array()) kept[key] = json::serialize(v);
    else kept[key] = v;
  }
  return Config::from_json_text(json::serialize(kept), path + " (a Hugging Face config.json)");
}

}  // namespace

RawConfig read_saved_policy_config(const std::string& path) {
  const auto text = read_text_file(path);
  json::error_code ec;
  auto value = json::parse(text, ec);
  if (ec) {
    // A damaged file of the saved policy (exit 1, as its damaged weights are), not a
    // configuration error; the config reader names the line and column of the fault.
    std::string fault = path + ": " + ec.message();
    try {
      Config::from_json_text(text, path);
    } catch (const ConfigError& e) {
      fault = e.what();
    }
    throw FormatError(fault + "; the saved policy's config.json is damaged: copy the folder again");
  }
  if (value.is_object() && value.as_object().contains("model_type") && !value.as_object().contains("type"))
    return hf_config(value.as_object(), path);
  const bool lerobot = value.is_object() &&
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
