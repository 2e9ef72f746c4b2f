// --policy.path=<adapter folder>: the base from adapter_config.json, the adapter's LoRA options, the adapter to load.
#include "adapter_start.hpp"

#include <boost/json.hpp>

#include <filesystem>

#include "config_provenance.hpp"
#include "shardkit/error.hpp"
#include "shardkit/files.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

/// A JSON list of strings, or one string, as "a,b"; "" for null.
std::string comma_joined(const json::value& value, const std::string& field, const std::string& origin) {
  if (value.is_null()) return "";
  if (value.is_string()) return std::string(value.as_string());
  std::string out;
  if (value.is_array())
    for (const auto& item : value.as_array()) {
      if (!item.is_string()) break;
      out += (out.empty() ? "" : ",") + std::string(item.as_string());
    }
  if (out.empty() && !(value.is_array() && value.as_array().empty()))
    throw ConfigError(origin + ": \"" + field + "\" is neither a module name nor a list of them");
  return out;
}

/// `path` absolute, without a trailing separator.
fs::path absolute_folder(const fs::path& path) { return folder_path(fs::absolute(path).string()); }

/// adapter_config.json at `path` as an object; ConfigError saying what `what` is when it cannot be read.
json::object read_adapter_config(const fs::path& path, const std::string& what) {
  try {
    return json::parse(read_text_file(path.string())).as_object();
  } catch (const std::exception& e) {
    throw ConfigError(what + " is a PEFT adapter folder, but its adapter_config.json cannot be read as a JSON "
                      "object (" + e.what() + ")");
  }
}

/// Fills the --peft.* options that neither layer gives from the adapter's `config` (read from
/// `origin`), refusing what shardkit does not train.
void fill_lora_options(const json::object& config, const std::string& origin, const RawConfig& flags, RawConfig& file) {
  const auto field = [&](const char* name) -> const json::value& {
    static const json::value null;
    const auto* value = config.if_contains(name);
    return value ? *value : null;
  };
  if (const auto& type = field("peft_type"); !type.is_null() && !(type.is_string() && type.as_string() == "LORA"))
    throw ConfigError(origin + ": peft_type " + json::serialize(type) + "; shardkit trains LoRA adapters only");
  for (const auto* unsupported : {"use_dora", "use_rslora"})
    if (field(unsupported).is_bool() && field(unsupported).as_bool())
      throw ConfigError(origin + ": \"" + unsupported + "\": true; shardkit trains plain LoRA adapters only");
  const auto saved = Provenance::saved(origin);
  const auto fill = [&](const std::string& key, Value value) {
    if (!flags.count(key) && !file.count(key)) file.emplace(key, RawValue{std::move(value), saved});
  };
  fill("peft.method_type", std::string("LORA"));
  // An r that is not an int64 (1.5, 1e30) goes on as a number: the option's check names it.
  if (const auto& r = field("r"); r.is_number())
    fill("peft.r", r.is_int64() ? Value{r.as_int64()} : Value{r.to_number<double>()});
  if (field("lora_alpha").is_number()) fill("peft.lora_alpha", field("lora_alpha").to_number<double>());
  if (field("lora_dropout").is_number()) fill("peft.lora_dropout", field("lora_dropout").to_number<double>());
  if (const auto targets = comma_joined(field("target_modules"), "target_modules", origin); !targets.empty())
    fill("peft.target_modules", targets);
  if (const auto whole = comma_joined(field("modules_to_save"), "modules_to_save", origin); !whole.empty())
    fill("peft.full_training_modules", whole);
}

/// The layer of the two that gives `key` a non-empty value (flags first), or nullptr.
RawConfig* giving(const std::string& key, RawConfig& flags, RawConfig& file) {
  for (auto* layer : {&flags, &file})
    if (const auto it = layer->find(key); it != layer->end() && !to_string(it->second.value).empty()) return layer;
  return nullptr;
}

}  // namespace

std::string start_from_adapter(RawConfig& flags, RawConfig& file) {
  // --policy.path=<base> --peft.adapter_path=<adapter>: the adapter's options, where it is here
  // (a resume reads its own checkpoint's adapter, and may do so after the folder is gone).
  if (auto* layer = giving("peft.adapter_path", flags, file)) {
    const auto adapter = to_string(layer->at("peft.adapter_path").value);
    const auto config_path = fs::path(adapter) / "adapter_config.json";
    if (fs::is_regular_file(config_path))
      fill_lora_options(read_adapter_config(config_path, "--peft.adapter_path=" + adapter), config_path.string(),
                        flags, file);
    if (const auto* path = giving("policy.path", flags, file);
        path && fs::is_regular_file(fs::path(to_string(path->at("policy.path").value)) / "adapter_config.json"))
      throw ConfigError("--policy.path=" + to_string(path->at("policy.path").value) + " is a PEFT adapter folder, "
                        "and --peft.adapter_path names an adapter too: give the base with --policy.path and the "
                        "adapter with --peft.adapter_path, or only --policy.path=<adapter folder>");
    return "";
  }
  auto* layer = giving("policy.path", flags, file);
  if (layer == nullptr) return "";
  const auto adapter = to_string(layer->at("policy.path").value);
  const auto config_path = fs::path(adapter) / "adapter_config.json";
  if (!fs::is_regular_file(config_path)) return "";
  const auto config = read_adapter_config(config_path, "--policy.path=" + adapter);

  // The base, as PEFT finds it: base_model_name_or_path, a folder here (shardkit reads no hub ids).
  const auto* named = config.if_contains("base_model_name_or_path");
  const std::string base = named && named->is_string() ? std::string(named->as_string()) : std::string();
  if (base.empty() || !fs::is_directory(base))
    throw ConfigError("--policy.path=" + adapter + " is a PEFT adapter whose base model " +
                      (base.empty() ? std::string("is not named (adapter_config.json has no base_model_name_or_path)")
                                    : "'" + base + "' (adapter_config.json's base_model_name_or_path) is not a folder "
                                      "here (shardkit reads no Hugging Face Hub ids)") +
                      "; give the base folder with --policy.path=<base folder> --peft.adapter_path=" + adapter);
  fill_lora_options(config, config_path.string(), flags, file);

  const auto given_as = layer->at("policy.path").origin;
  (*layer)["policy.path"] =
      RawValue{absolute_folder(base).string(), given_as + " (an adapter: its base_model_name_or_path)"};
  (*layer)["peft.adapter_path"] = RawValue{absolute_folder(adapter).string(), given_as};
  return "--policy.path=" + adapter + " is a PEFT adapter: training it further on its base " +
         absolute_folder(base).string() + ", with its LoRA options (adapter_config.json) where no --peft.* option "
         "is given";
}

}  // namespace shardkit::train
