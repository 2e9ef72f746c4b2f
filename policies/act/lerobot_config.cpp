// LeRobot's ACTConfig JSON for act checkpoints.
#include "lerobot_config.hpp"

#include <cstdio>
#include <vector>

#include "act_options.hpp"

namespace shardkit::act {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  std::string s = text;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";  // a float, as Python writes it
  return s;
}

std::string feature(const std::string& type, const std::vector<std::int64_t>& shape) {
  std::string dims;
  for (const auto d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  return "{\"type\": " + quoted(type) + ", \"shape\": [" + dims + "]}";
}

/// An option's value as LeRobot writes it: "null" strings of optional fields become null.
std::string option_value(const OptionSpec& spec, const Config& options) {
  const std::string name = spec.name;
  switch (spec.type) {
    case OptionType::Bool: return options.get_bool(name) ? "true" : "false";
    case OptionType::Int: return std::to_string(options.get_int(name));
    case OptionType::Float: return number(options.get_float(name));
    case OptionType::String: break;
  }
  const auto text = options.get_string(name);
  if (text.empty() || text == "null" || text == "None") return "null";
  if (name == "temporal_ensemble_coeff") return number(std::stod(text));
  if (name == "normalization_mapping") return text;  // already a JSON object
  return quoted(text);
}

}  // namespace

std::string lerobot_config_json(const ActConfig& config, const Config& options) {
  std::vector<std::pair<std::string, std::string>> inputs;
  if (config.state_dim > 0) inputs.push_back({"observation.state", feature("STATE", {config.state_dim})});
  if (config.env_state_dim > 0)
    inputs.push_back({"observation.environment_state", feature("ENV", {config.env_state_dim})});
  for (std::size_t i = 0; i < config.image_features.size(); ++i)
    inputs.push_back({config.image_features[i], feature("VISUAL", config.image_shapes[i])});
  std::string input_text;
  for (const auto& [name, text] : inputs) input_text += (input_text.empty() ? "" : ", ") + quoted(name) + ": " + text;

  std::string json = "{\n  \"type\": \"act\",\n";
  json += "  \"input_features\": {" + input_text + "},\n";
  json += "  \"output_features\": {\"action\": " + feature("ACTION", {config.action_dim}) + "},\n";
  // PreTrainedConfig's other fields, as LeRobot writes them for a local run.
  json += "  \"device\": \"cpu\",\n  \"use_amp\": false,\n  \"use_peft\": false,\n  \"push_to_hub\": false,\n"
          "  \"repo_id\": null,\n  \"private\": null,\n  \"tags\": null,\n  \"license\": null,\n"
          "  \"pretrained_path\": null,\n  \"pretrained_revision\": null";
  for (const auto& spec : kActOptions) json += ",\n  " + quoted(spec.name) + ": " + option_value(spec, options);
  return json + "\n}\n";
}

}  // namespace shardkit::act
