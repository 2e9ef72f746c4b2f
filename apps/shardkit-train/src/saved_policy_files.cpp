// Checks a --policy.path folder written by LeRobot or shardkit against the dataset it will train on.
#include "saved_policy_files.hpp"

#include <boost/json.hpp>

#include <filesystem>

#include "shardkit/error.hpp"
#include "shardkit/files.hpp"
#include "shardkit/logging.hpp"
#include "shardkit/safetensors.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

json::value parse_file(const std::string& path) {
  json::error_code ec;
  auto value = json::parse(read_text_file(path), ec);
  if (ec) throw FormatError(path + " is not valid JSON (" + ec.message() + "); the checkpoint is damaged: copy it again");
  return value;
}

/// The {name: shape} of one of config.json's feature lists ("input_features", "output_features").
FeatureShapes saved_features(const json::object& config, const char* list, const std::string& path) {
  FeatureShapes out;
  const auto* features = config.if_contains(list);
  if (!features || !features->is_object()) return out;
  for (const auto& [name, feature] : features->as_object()) {
    const auto* shape = feature.is_object() ? feature.as_object().if_contains("shape") : nullptr;
    if (!shape || !shape->is_array())
      throw FormatError(path + ": " + list + "." + std::string(name) + " has no \"shape\" list");
    auto& dims = out[std::string(name)];
    for (const auto& d : shape->as_array()) dims.push_back(d.to_number<std::int64_t>());
  }
  return out;
}

bool is_policy_input(const std::string& name) { return name.rfind("observation.", 0) == 0; }

}  // namespace

FeatureShapes features_for_saved_policy(const std::string& pretrained_dir, const FeatureShapes& dataset,
                                        const std::string& dataset_name) {
  const auto path = (fs::path(pretrained_dir) / "config.json").string();
  const auto value = parse_file(path);
  if (!value.is_object()) return dataset;
  const auto& config = value.as_object();
  auto inputs = saved_features(config, "input_features", path);
  const auto outputs = saved_features(config, "output_features", path);
  if (inputs.empty() && outputs.empty()) return dataset;
  inputs.insert(outputs.begin(), outputs.end());
  for (const auto& [name, shape] : inputs) {
    const auto it = dataset.find(name);
    if (it == dataset.end()) {
      std::string has;
      for (const auto& [n, s] : dataset)
        if (is_policy_input(n) || n == "action") has += (has.empty() ? "" : ", ") + n;
      throw ConfigError("--policy.path=" + pretrained_dir + ": the saved policy reads '" + name + "' " +
                        shape_text(shape) + ", which dataset '" + dataset_name + "' does not have (it has " + has +
                        "); train it on a dataset with that feature, or start from scratch without --policy.path");
    }
    if (it->second != shape)
      throw ConfigError("--policy.path=" + pretrained_dir + ": '" + name + "' has shape " + shape_text(shape) +
                        " in the saved policy's config.json and " + shape_text(it->second) + " in dataset '" +
                        dataset_name + "'; its weights cannot take this dataset's " + name);
  }
  FeatureShapes out;
  for (const auto& [name, shape] : dataset) {
    if (is_policy_input(name) && !inputs.count(name)) {
      logger()->info("dataset feature '{}' is not an input of the saved policy at {}: it is not used", name,
                     pretrained_dir);
      continue;
    }
    out.emplace(name, shape);
  }
  return out;
}

void check_processor_files(const std::string& pretrained_dir) {
  for (const char* stem : {"policy_preprocessor", "policy_postprocessor"}) {
    const auto path = (fs::path(pretrained_dir) / (std::string(stem) + ".json")).string();
    if (!fs::exists(path)) continue;
    const auto value = parse_file(path);
    const auto* steps = value.is_object() ? value.as_object().if_contains("steps") : nullptr;
    if (!steps || !steps->is_array())
      throw FormatError(path + " has no \"steps\" list: it is not a LeRobot processor file, or it is damaged");
    for (const auto& step : steps->as_array()) {
      const auto* file = step.is_object() ? step.as_object().if_contains("state_file") : nullptr;
      if (!file || !file->is_string()) continue;
      const auto state = (fs::path(pretrained_dir) / std::string(file->as_string())).string();
      if (!fs::exists(state))
        throw FormatError(path + " names " + state + ", which does not exist; copy the whole pretrained_model folder");
      safetensors::File::open(state);  // throws FormatError naming the file when it is damaged
    }
  }
}

}  // namespace shardkit::train
