// Configuration: dotted flags and TOML/JSON files, validated against declared option schemas.
//
// The flow (see apps/shardkit-train): split argv into flags with parse_flags(); read an
// optional --config_path file with load_config_file(); build a Schema from core's options
// and the options of the plugins that can be selected; resolve() checks every key, type
// and range and returns the fully resolved Config (defaults filled in).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "shardkit/options.hpp"

namespace shardkit {

/// A typed configuration value.
using Value = std::variant<bool, std::int64_t, double, std::string>;

/// Writes a value as it would be given on the command line ("true", "3", "0.001", "mlp").
/// Doubles use the shortest representation that reads back to the same value.
std::string to_string(const Value& value);

/// One value as given, before validation: a flag's text or a file's typed value.
struct RawValue {
  Value value;         ///< flags always carry a std::string; files carry the parsed type
  std::string origin;  ///< where it came from, for errors: "--optimizer.lr" or "cfg.toml:3:7"
};

/// Values keyed by dotted name, as given by the user (no defaults, not validated).
using RawConfig = std::map<std::string, RawValue>;

/// Splits command-line arguments (without argv[0]) into dotted flags.
/// Accepts `--key=value` and bare `--key` (meaning "true"); both `-` and `_` are kept
/// as written. Anything not starting with `--` is a ConfigError naming it.
RawConfig parse_flags(const std::vector<std::string>& args);

/// Reads a TOML (.toml) or JSON (.json) file and flattens nested tables into dotted
/// keys. A syntax error is a ConfigError naming the file, line and column.
RawConfig load_config_file(const std::string& path);

/// Declared below; Schema names it as a friend.
class Config;

/// One option in a schema: a spec under a full dotted key, and who declared it.
struct SchemaEntry {
  std::string key;      ///< full dotted key, e.g. "policy.hidden_dim"
  OptionType type;
  std::string default_value;
  std::string help;
  std::optional<double> min, max;
  std::vector<std::string> choices;  ///< empty = any value
  std::string owner;  ///< "core" or e.g. "policy 'mlp'" (used in --help and errors)
};

/// The set of keys a run accepts, plus keys that belong to plugins that are not selected
/// (so that "--policy.chunk_size belongs to policy 'act' but policy.type=mlp" can be said).
class Schema {
 public:
  /// Adds the options of `owner` under `prefix` ("" for top-level, "policy." ...).
  void add(const std::string& prefix, const OptionSpec* specs, std::size_t count,
           const std::string& owner);
  /// Records options of a plugin that is not selected; giving one is an error that
  /// names `owner` and `selector` (e.g. "policy.type=mlp").
  void add_inactive(const std::string& prefix, const OptionSpec* specs, std::size_t count,
                    const std::string& owner, const std::string& selector);
  /// Keys that may be given without being declared, e.g. "plugins", "help".
  void allow_extra(const std::string& key);

  /// Every active option, in the order added.
  const std::vector<SchemaEntry>& entries() const { return entries_; }
  /// The active option with this full dotted key, or nullptr.
  const SchemaEntry* find(const std::string& key) const;

  /// Formats the entries whose owner is `owner` (or all when empty) for --help.
  std::string help_text(const std::string& owner = "") const;

 private:
  friend class Config;
  friend Config resolve(const Schema&, const RawConfig&, const RawConfig&);
  std::vector<SchemaEntry> entries_;
  struct Inactive {
    std::string key, owner, selector;
  };
  std::vector<Inactive> inactive_;
  std::vector<std::string> extra_;
};

/// A resolved, validated configuration: every schema key has a typed value.
class Config {
 public:
  /// An empty configuration.
  Config() = default;

  /// Whether `key` has a value.
  bool has(const std::string& key) const;
  /// The value of `key`; ConfigError naming the key when absent or of another type.
  bool get_bool(const std::string& key) const;
  /// The value of `key`; ConfigError naming the key when absent or of another type.
  std::int64_t get_int(const std::string& key) const;
  double get_float(const std::string& key) const;  ///< also accepts Int values
  /// The value of `key`; ConfigError naming the key when absent or of another type.
  std::string get_string(const std::string& key) const;
  const Value& get(const std::string& key) const;  ///< ConfigError when absent
  /// Sets or replaces the value of `key` (no schema check).
  void set(const std::string& key, Value value);

  /// The values under `prefix` ("policy.") with the prefix removed.
  Config section(const std::string& prefix) const;

  /// Every value, keyed by full dotted key.
  const std::map<std::string, Value>& values() const { return values_; }

  /// Nested, pretty-printed JSON ({"policy": {"type": "mlp", ...}, "steps": 100}):
  /// keys sorted, 2-space indent, doubles as to_string() writes them so they read back
  /// bit for bit. ConfigError when a key is both a value and a group ("a" and "a.b"),
  /// a double is not finite, or a string is not valid UTF-8.
  std::string to_json() const;
  /// Inverse of to_json() (values keep their JSON types: int, double, bool, string).
  static RawConfig from_json_text(const std::string& text, const std::string& origin);

 private:
  std::map<std::string, Value> values_;
};

/// Validates `file` then `flags` (flags win) against `schema` and fills defaults.
/// Errors (ConfigError), each naming the key and where it came from:
///  - unknown key: "unknown option --optimzer.lr; did you mean --optimizer.lr?"
///  - key of a plugin that is not selected: names the owner and the selector
///  - wrong type: "--steps=abc: expected an integer"
///  - out of range / not a choice: names the value and what is allowed
/// All errors are collected and thrown as one ConfigError, one per line.
/// Type rules: a string (a flag, or a quoted file value) is parsed as the option's type
/// (bool: true/false/1/0/yes/no, any case; int: a whole base-10 number; float: a finite
/// decimal or scientific number). A typed file value must have the option's type, except
/// that an int is accepted for a float option and written in decimal for a string option.
/// Keys allowed with Schema::allow_extra() take any value, stored as its to_string().
/// An option whose default is empty and whose type is not String has no value unless given.
Config resolve(const Schema& schema, const RawConfig& file, const RawConfig& flags);

/// Edit distance used for "did you mean" suggestions (exposed for tests).
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace shardkit
