// AITraining's command line and YAML file read into LLMTrainingParams values.
#include "llm_params.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "llm_fields.hpp"
#include "shardkit/comma_list.hpp"
#include "shardkit/config_resolution.hpp"
#include "shardkit/error.hpp"
#include "shardkit/files.hpp"

namespace shardkit::llm {
namespace {

std::optional<bool> parse_bool(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "true" || s == "1" || s == "yes") return true;
  if (s == "false" || s == "0" || s == "no") return false;
  return std::nullopt;
}

/// Whether `convert` (std::stoll, std::stod) reads all of `s`.
template <class Convert>
bool parses_whole(const std::string& s, Convert convert) {
  if (s.empty()) return false;
  std::size_t used = 0;
  try {
    convert(s, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == s.size();
}

bool parses_as_int(const std::string& s) {
  return parses_whole(s, [](const std::string& t, std::size_t* used) { return std::stoll(t, used); });
}

bool parses_as_float(const std::string& s) {
  return parses_whole(s, [](const std::string& t, std::size_t* used) { return std::stod(t, used); });
}

/// Why `value` is not of `kind`, or "".
std::string kind_problem(Kind kind, const std::string& value) {
  switch (kind) {
    case Kind::Int:
      return parses_as_int(value) ? "" : "an integer";
    case Kind::Float:
      return parses_as_float(value) ? "" : "a number";
    case Kind::Bool:
      return parse_bool(value) ? "" : "true or false";
    case Kind::BlockSize: {
      // Every comma-separated item an integer (comma_list drops empty items: none may be).
      const auto parts = comma_list(value);
      const bool whole = parts.size() == static_cast<std::size_t>(std::count(value.begin(), value.end(), ',')) + 1;
      return whole && std::all_of(parts.begin(), parts.end(), parses_as_int)
                 ? ""
                 : "an integer or a comma-separated list of integers (1024 or 512,1024)";
    }
    case Kind::Mapping: {
      boost::system::error_code ec;
      const auto v = boost::json::parse(value, ec);
      return !ec && v.is_object() ? "" : "a mapping ({\"text_column\": \"messages\"})";
    }
    case Kind::String:
      return "";
  }
  return "";
}

/// The closest field name to `name`, for "did you mean" (shardkit-train's rule), or "".
std::string closest_field(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& f : fields()) names.emplace_back(f.name);
  const auto close = closest_names(name, names, 1);
  return close.empty() ? "" : close.front();
}

std::string dashed(std::string s) {
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

}  // namespace

Params::Params() {
  for (const auto& f : fields())
    values_[f.name] = Param{f.default_value ? std::optional<std::string>(f.default_value) : std::nullopt, kDefault};
}

void Params::set(const std::string& name, std::optional<std::string> value, const std::string& origin) {
  const auto key = field_key(name);
  const auto* field = find_field(key);
  if (!field && !is_other_field(key)) {
    const auto near = closest_field(key);
    throw ConfigError(origin + ": LLMTrainingParams has no field '" + key + "'" +
                      (near.empty() ? "" : " (did you mean --" + dashed(near) + "?)") +
                      "; shardkit-llm --help lists the ones it acts on");
  }
  if (field && !value && field->default_value)
    throw ConfigError(origin + " is null (None), and " + key + " takes a value (AITraining's default: " +
                      field->default_value + ")");
  if (field && value) {
    if (const auto problem = kind_problem(field->kind, *value); !problem.empty())
      throw ConfigError(origin + "=" + *value + ": " + key + " takes " + problem);
    if (field->kind == Kind::Bool) value = *parse_bool(*value) ? "true" : "false";
  }
  values_[key] = Param{std::move(value), origin};
}

const Param& Params::at(const std::string& name) const {
  const auto it = values_.find(field_key(name));
  if (it == values_.end()) throw RuntimeError("shardkit-llm: no field " + name);
  return it->second;
}

std::string Params::text(const std::string& name) const { return at(name).value.value_or(""); }
std::int64_t Params::integer(const std::string& name) const { return std::stoll(text(name)); }
double Params::number(const std::string& name) const { return std::stod(text(name)); }
bool Params::flag(const std::string& name) const { return text(name) == "true"; }

Request parse_command_line(const std::vector<std::string>& args) {
  Request request;
  // The YAML file first, whatever its place: the flags win over it.
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i] == "--config" || args[i].rfind("--config=", 0) == 0) {
      request.config_path = args[i] == "--config" ? (i + 1 < args.size() ? args[i + 1] : "") : args[i].substr(9);
      if (request.config_path.empty()) throw ConfigError("--config needs a file: --config config.yaml");
      read_yaml_config(request.config_path, request.params);
    }
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i] == "--training_config" || args[i] == "--training-config" || args[i].rfind("--training_config=", 0) == 0 ||
        args[i].rfind("--training-config=", 0) == 0) {
      const auto eq = args[i].find('=');
      request.training_config = eq == std::string::npos ? (i + 1 < args.size() ? args[i + 1] : "") : args[i].substr(eq + 1);
      if (request.training_config.empty())
        throw ConfigError("--training_config needs a file: --training_config my-model/training_params.json");
      read_training_params(request.training_config, request.params);
      request.train = true;
    }
  static const std::set<std::string> kPassthrough = {"print_config", "dry_run"};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& arg = args[i];
    if (arg == "--config" || arg == "--training_config" || arg == "--training-config") {
      ++i;
      continue;
    }
    if (arg.rfind("--config=", 0) == 0 || arg.rfind("--training_config=", 0) == 0 ||
        arg.rfind("--training-config=", 0) == 0)
      continue;
    if (arg == "llm") continue;  // `aitraining llm --train ...` pasted whole (after the program name)
    if (arg.rfind("--", 0) != 0)
      throw ConfigError("'" + arg + "': shardkit-llm takes flags only (--train --model ... --data-path ...)");
    const auto eq = arg.find('=');
    const auto name = field_key(arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2));
    std::optional<std::string> inline_value;
    if (eq != std::string::npos) inline_value = arg.substr(eq + 1);
    if (name == "train" || name == "help" || name == "h") {
      (name == "train" ? request.train : request.help) = !inline_value || parse_bool(*inline_value).value_or(false);
      continue;
    }
    if (name == "backend") {  // AITraining's --backend: where the job runs
      const auto value = inline_value ? *inline_value : (i + 1 < args.size() ? args[++i] : "");
      if (value.rfind("local", 0) != 0)
        throw ConfigError("--backend " + value + ": shardkit-llm trains here (AITraining's local backends); "
                          "leave --backend out or give local");
      continue;
    }
    if (kPassthrough.count(name)) {
      request.passthrough.push_back("--" + name + "=" + (inline_value ? *inline_value : "true"));
      continue;
    }
    // --no-<bool field> turns it off (AITraining has this for merge_adapter only).
    if (!inline_value && name.rfind("no_", 0) == 0)
      if (const auto* f = find_field(name.substr(3)); f && f->kind == Kind::Bool) {
        request.params.set(f->name, "false", "--" + dashed(name));
        continue;
      }
    const auto* field = find_field(name);
    if (field && field->kind == Kind::Bool && !inline_value) {
      request.params.set(name, "true", "--" + dashed(name));
      continue;
    }
    std::optional<std::string> value = inline_value;
    if (!value) {
      const bool next_is_flag = i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0;
      if (next_is_flag && !field && is_other_field(name)) value = "true";  // one of AITraining's store_true flags
      else if (next_is_flag) throw ConfigError("--" + dashed(name) + " needs a value: --" + dashed(name) + " VALUE");
      else value = args[++i];
    }
    request.params.set(name, value, "--" + dashed(name));
  }
  return request;
}

namespace {

/// The most a mapping or list value may expand to, and how deep mappings may nest: aliases of
/// aliases (or a mapping holding itself) cannot make a small file grow without end.
constexpr std::size_t kMaxValueBytes = 1 << 20;
constexpr int kMaxDepth = 32;

/// A YAML scalar as a field value (nullopt for null); ${VAR} read from the environment.
std::optional<std::string> scalar(const YAML::Node& node, const std::string& where, int depth = 0) {
  if (!node || node.IsNull()) return std::nullopt;
  if (depth > kMaxDepth)
    throw ConfigError(where + ": mappings nested more than " + std::to_string(kMaxDepth) +
                      " deep (a mapping that holds itself through an alias?)");
  const auto bounded = [&](std::string text) {
    if (text.size() > kMaxValueBytes)
      throw ConfigError(where + ": the value expands to more than 1 MiB (aliases of aliases?)");
    return text;
  };
  if (node.IsMap()) {
    boost::json::object o;
    for (const auto& kv : node) {
      const auto v = scalar(kv.second, where + "." + kv.first.as<std::string>(), depth + 1);
      o[kv.first.as<std::string>()] = v ? boost::json::value(*v) : boost::json::value(nullptr);
      if (v && v->size() > kMaxValueBytes / 2) bounded(boost::json::serialize(o));
    }
    return bounded(boost::json::serialize(o));
  }
  if (node.IsSequence()) {
    std::string joined;
    for (const auto& item : node) {
      joined += (joined.empty() ? "" : ",") + item.as<std::string>();
      if (joined.size() > kMaxValueBytes) bounded(joined);
    }
    return joined;
  }
  auto text = node.as<std::string>();
  if (text == "~" || text == "null" || text == "None") return std::nullopt;
  return text;
}

/// ${VAR} read from the environment (None when it is unset, as AITraining's os.environ.get).
std::optional<std::string> env_substituted(const std::optional<std::string>& value) {
  if (!value || value->rfind("${", 0) != 0 || value->back() != '}') return value;
  const auto* v = std::getenv(value->substr(2, value->size() - 3).c_str());
  return v ? std::optional<std::string>(v) : std::nullopt;
}

}  // namespace

void read_training_params(const std::string& path, Params& params) {
  std::error_code missing;
  if (!std::filesystem::is_regular_file(path, missing)) throw ConfigError("--training_config " + path + ": no such file");
  const auto text = read_text_file(path);
  boost::system::error_code ec;
  const auto root = boost::json::parse(text, ec);
  if (ec || !root.is_object()) throw FormatError(path + ": not a JSON object of LLMTrainingParams fields");
  for (const auto& [key, v] : root.as_object()) {
    std::optional<std::string> value;
    if (v.is_string()) value = std::string(v.as_string());
    else if (v.is_bool()) value = v.as_bool() ? "true" : "false";
    else if (v.is_int64() || v.is_uint64()) value = std::to_string(v.to_number<std::int64_t>());
    else if (v.is_double()) value = boost::json::serialize(v);
    else if (v.is_array()) {
      std::string joined;
      for (const auto& item : v.as_array()) joined += (joined.empty() ? "" : ",") + boost::json::serialize(item);
      value = joined;
    } else if (v.is_object()) value = boost::json::serialize(v);
    params.set(std::string(key), value, path + " " + std::string(key));
  }
}

std::string training_params_json(const Params& params) {
  boost::json::object out;
  for (const auto& f : fields()) {
    const auto& value = params.at(f.name).value;
    if (std::string(f.name) == "token") continue;  // as AITraining: the token is not written
    if (!value) {
      out[f.name] = nullptr;
      continue;
    }
    switch (f.kind) {
      case Kind::Int: out[f.name] = std::stoll(*value); break;
      case Kind::Float: out[f.name] = std::stod(*value); break;
      case Kind::Bool: out[f.name] = *value == "true"; break;
      case Kind::Mapping: out[f.name] = boost::json::parse(*value); break;
      case Kind::BlockSize: {
        boost::json::array sizes;
        for (const auto& size : comma_list(*value)) sizes.emplace_back(std::stoll(size));
        if (sizes.size() == 1) out[f.name] = sizes.front();
        else out[f.name] = std::move(sizes);
        break;
      }
      case Kind::String: out[f.name] = *value; break;
    }
  }
  return boost::json::serialize(out) + "\n";
}

namespace {
void read_yaml(const std::string& path, Params& params);
}  // namespace

void read_yaml_config(const std::string& path, Params& params) {
  try {
    read_yaml(path, params);
  } catch (const YAML::Exception& e) {
    throw ConfigError(path + ": " + e.what() + " (AITraining's keys take single values, data and params mappings)");
  }
}

namespace {

void read_yaml(const std::string& path, Params& params) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw ConfigError("--config " + path + ": no such file");
  } catch (const YAML::Exception& e) {
    throw FormatError(path + ": not valid YAML (" + e.what() + ")");
  }
  if (!root.IsMap()) throw FormatError(path + ": not a YAML mapping of AITraining's keys (task, base_model, ...)");
  // AITraining's parser reads these keys directly; a missing one is its KeyError, here a message.
  std::vector<std::string> missing;
  for (const char* key : {"task", "backend", "base_model", "project_name", "log"})
    if (!root[key]) missing.push_back(key);
  const auto data = root["data"];
  if (!data || !data.IsMap()) missing.push_back("data");
  else
    for (const char* key : {"path", "train_split", "valid_split", "column_mapping", "chat_template"})
      if (!data[key]) missing.push_back(std::string("data.") + key);
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw ConfigError(path + ": AITraining's config needs " + list + " (valid_split and chat_template may be null)");
  }
  const auto at = [&](const std::string& key) { return path + " " + key; };
  const auto task = root["task"].as<std::string>();
  static const std::set<std::string> kTasks = {"llm", "llm-sft", "llm-generic", "llm-orpo", "llm-dpo", "llm-reward",
                                               "lm_training"};
  if (!kTasks.count(task))
    throw ConfigError(at("task") + ": " + task + " is not a language-model task; shardkit-llm trains llm, llm-sft and "
                      "llm-generic");
  const auto backend = root["backend"].as<std::string>();
  if (backend.rfind("local", 0) != 0)
    throw ConfigError(at("backend") + ": " + backend + ": shardkit-llm trains here (AITraining's local backends); "
                      "give backend: local");
  params.set("model", scalar(root["base_model"], "base_model"), at("base_model"));
  params.set("project_name", scalar(root["project_name"], "project_name"), at("project_name"));
  params.set("data_path", scalar(data["path"], "data.path"), at("data.path"));
  params.set("chat_template", scalar(data["chat_template"], "data.chat_template"), at("data.chat_template"));
  if (const auto dash = task.find('-'); dash != std::string::npos) {
    auto trainer = task.substr(dash + 1);
    params.set("trainer", trainer == "generic" ? "default" : trainer, at("task"));
  }
  if (const auto mapping = data["column_mapping"]; mapping.IsMap())
    for (const auto& kv : mapping) {
      const auto key = kv.first.as<std::string>();
      params.set(key, scalar(kv.second, key), at("data.column_mapping." + key));
    }
  params.set("train_split", scalar(data["train_split"], "train_split"), at("data.train_split"));
  params.set("valid_split", scalar(data["valid_split"], "valid_split"), at("data.valid_split"));
  params.set("log", scalar(root["log"], "log"), at("log"));
  if (const auto hub = root["hub"]; hub && hub.IsMap()) {
    for (const char* key : {"username", "token"})
      if (hub[key]) params.set(key, env_substituted(scalar(hub[key], key)), at(std::string("hub.") + key));
    if (hub["push_to_hub"]) params.set("push_to_hub", scalar(hub["push_to_hub"], "push_to_hub"), at("hub.push_to_hub"));
  }
  if (const auto other = root["params"]; other && other.IsMap())
    for (const auto& kv : other) {
      const auto key = kv.first.as<std::string>();
      params.set(key, scalar(kv.second, key), at("params." + key));
    }
}

}  // namespace

}  // namespace shardkit::llm
