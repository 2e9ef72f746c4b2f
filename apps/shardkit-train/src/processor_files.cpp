// LeRobot's policy_preprocessor/policy_postprocessor files, as its DataProcessorPipeline.save_pretrained writes them.
#include "processor_files.hpp"

#include <ATen/ATen.h>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>

#include "shardkit/capability.hpp"
#include "shardkit/safetensors_torch.hpp"

namespace shardkit::train {
namespace {

namespace json = boost::json;

constexpr const char* kPre = "policy_preprocessor";
constexpr const char* kPost = "policy_postprocessor";

json::object features_json(const Normalizer& normalizer, bool outputs_only) {
  // LeRobot writes {**input_features, **output_features}: observations first, then actions.
  json::object out;
  for (const bool actions : {false, true}) {
    if (outputs_only && !actions) continue;
    for (const auto& [name, feature] : normalizer.features()) {
      if ((feature.type == FeatureType::Action) != actions) continue;
      json::array shape;
      for (const auto d : feature.shape) shape.push_back(d);
      if (shape.empty()) shape.push_back(1);  // LeRobot keeps info.json's [1] for scalars
      out[name] = json::object{{"type", feature_type_name(feature.type)}, {"shape", shape}};
    }
  }
  return out;
}

json::object normalizer_config(const Normalizer& normalizer, bool outputs_only) {
  json::object norm_map;
  for (const auto& [type, mode] : normalizer.mapping())
    norm_map[feature_type_name(type)] = normalization_mode_name(mode);
  return json::object{{"eps", normalizer.eps()},
                      {"features", features_json(normalizer, outputs_only)},
                      {"norm_map", norm_map}};
}

json::object step(const char* registry_name, json::object config) {
  return json::object{{"registry_name", registry_name}, {"config", std::move(config)}};
}

/// The statistics as one safetensors file, keys `<feature>.<stat>` (LeRobot's state_dict()).
std::string stats_file(const Normalizer& normalizer) {
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& [feature, stats] : normalizer.stats())
    for (const auto& [stat, tensor] : stats)
      tensors.emplace_back(feature + "." + stat, tensor.to(at::kFloat).contiguous().cpu());
  std::vector<safetensors::TensorRef> refs;
  for (const auto& [name, tensor] : tensors) refs.push_back(safetensors::ref_of(name, tensor));
  const auto bytes = safetensors::serialize(refs);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

Normalizer dataset_normalizer(const Dataset& dataset, const NormalizationMapping& mapping) {
  const auto* with_stats = capability<DatasetStatistics>(dataset);
  if (!with_stats) return Normalizer();
  const auto cameras = with_stats->cameras();
  std::map<std::string, Normalizer::Feature> features;
  for (const auto& [name, shape] : dataset.features()) {
    const bool camera = std::find(cameras.begin(), cameras.end(), name) != cameras.end();
    if (const auto type = feature_type_of(name, camera)) features[name] = {*type, shape};
  }
  return Normalizer(std::move(features), mapping, with_stats->stats());
}

std::map<std::string, std::string> processor_files(const Normalizer& normalizer, const std::string& device) {
  // DeviceProcessorStep records the device type only ("cuda", not "cuda:0").
  const auto device_type = device.substr(0, device.find(':'));
  const bool has_state = !normalizer.stats().empty();  // LeRobot names a state file only when there is state
  const auto state_file = [&](const char* pipeline, int index, const char* registry) {
    return std::string(pipeline) + "_step_" + std::to_string(index) + "_" + registry + ".safetensors";
  };

  auto normalize = step("normalizer_processor", normalizer_config(normalizer, false));
  auto unnormalize = step("unnormalizer_processor", normalizer_config(normalizer, true));
  if (has_state) {
    normalize["state_file"] = state_file(kPre, 3, "normalizer_processor");
    unnormalize["state_file"] = state_file(kPost, 0, "unnormalizer_processor");
  }
  const json::object pre{
      {"name", kPre},
      {"steps", json::array{step("rename_observations_processor", {{"rename_map", json::object{}}}),
                            step("to_batch_processor", {}),
                            step("device_processor", {{"device", device_type}, {"float_dtype", nullptr}}),
                            normalize}}};
  const json::object post{
      {"name", kPost},
      {"steps", json::array{unnormalize, step("device_processor", {{"device", "cpu"}, {"float_dtype", nullptr}})}}};

  std::map<std::string, std::string> files{
      {std::string("pretrained_model/") + kPre + ".json", json::serialize(pre) + "\n"},
      {std::string("pretrained_model/") + kPost + ".json", json::serialize(post) + "\n"}};
  if (has_state) {
    const auto stats = stats_file(normalizer);
    files["pretrained_model/" + state_file(kPre, 3, "normalizer_processor")] = stats;
    files["pretrained_model/" + state_file(kPost, 0, "unnormalizer_processor")] = stats;
  }
  return files;
}

}  // namespace shardkit::train
