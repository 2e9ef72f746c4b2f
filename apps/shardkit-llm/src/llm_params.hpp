// An AITraining training request: the LLMTrainingParams values of a command line or YAML file,
// each with where it came from.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shardkit::llm {

/// One field's value: its text (nullopt for None) and where it came from ("--lr", "cfg.yaml
/// params.lr", "AITraining's default").
struct Param {
  std::optional<std::string> value;
  std::string origin;
};

/// Every field of fields() (and other fields once given), starting at AITraining's defaults.
class Params {
 public:
  static constexpr const char* kDefault = "AITraining's default";
  Params();
  /// Sets field `name` (dashes read as underscores) after checking `value` against its kind.
  /// ConfigError naming `origin` for a value of the wrong kind or an unknown field.
  void set(const std::string& name, std::optional<std::string> value, const std::string& origin);
  const Param& at(const std::string& name) const;
  bool is_none(const std::string& name) const { return !at(name).value.has_value(); }
  /// Whether the command line or the file gave the field.
  bool given(const std::string& name) const { return at(name).origin != kDefault; }
  std::string text(const std::string& name) const;
  std::int64_t integer(const std::string& name) const;
  double number(const std::string& name) const;
  bool flag(const std::string& name) const;
  const std::map<std::string, Param>& all() const { return values_; }

 private:
  std::map<std::string, Param> values_;
};

/// What a shardkit-llm command line asks for.
struct Request {
  bool train = false;        ///< --train
  bool help = false;         ///< --help
  std::string config_path;   ///< --config FILE (AITraining's YAML)
  std::string training_config;  ///< --training_config FILE (a training_params.json)
  std::vector<std::string> passthrough;  ///< shardkit-train's own flags (--print_config, --dry_run)
  Params params;
};

/// Reads `aitraining llm --train ...`'s flags: `--field-name VALUE`, `--field_name=VALUE`, bools
/// as store_true flags (`--peft`) or `--no-<field>`, `--merge-adapter/--no-merge-adapter`, and
/// `--config FILE`, whose values the flags then override. ConfigError for an unknown flag (with
/// the closest field), a missing value, or a value of the wrong kind.
Request parse_command_line(const std::vector<std::string>& args);

/// A training_params.json (LLMTrainingParams' fields as a JSON object, what shardkit-llm writes
/// into the project folder) into `params`. ConfigError naming the file and field for a bad value.
void read_training_params(const std::string& path, Params& params);

/// `params` as training_params.json: every field shardkit-llm acts on, typed as AITraining's
/// model_dump writes it (numbers, bools, null, a list for several block sizes), the token left out.
std::string training_params_json(const Params& params);

/// AITraining's YAML (task, backend, base_model, project_name, log, data: {path, train_split,
/// valid_split, chat_template, column_mapping}, params: {...}, hub: {...} with ${VAR}) into
/// `params`. ConfigError naming the file and key for a missing required key or a bad value.
void read_yaml_config(const std::string& path, Params& params);

}  // namespace shardkit::llm
