// Where each resolved option came from: what --print_config prints and checkpoints keep beside train_config.json.
#pragma once

#include <map>
#include <string>

#include "shardkit/config.hpp"
#include "shardkit/mesh.hpp"
#include "shardkit/runtime.hpp"
#include "train_options.hpp"

namespace shardkit::train {

/// Where one resolved value came from.
struct ValueSource {
  /// "default", a flag ("--steps"), a file position ("run.toml:3:7"), "saved config
  /// <file>:<line>:<column>" on resume, or "environment <VARIABLE>=<value>".
  std::string origin;
  /// What the value resolves to when that differs from the text given ("auto" -> "ddp"), and
  /// why; "" when it is used as it is.
  std::string note;
};

/// The sources of the values of one configuration.
class Provenance {
 public:
  Provenance() = default;
  /// From resolve_all()'s origins.
  explicit Provenance(const std::map<std::string, std::string>& origins);

  /// Records that `key` holds a value set from `origin` (replacing what was recorded).
  void set(const std::string& key, std::string origin, std::string note = "");
  /// Adds how the value of `key` resolves further, keeping its origin.
  void add_note(const std::string& key, const std::string& note);
  /// The source of `key`, or nullptr when none was recorded.
  const ValueSource* find(const std::string& key) const;

  /// The origin of a value read from a checkpoint (on resume, or --policy.path's config.json)
  /// at `where` ("<file>:3:7"): "saved config <file>:3:7".
  static std::string saved(const std::string& where);
  /// The origin of a value read from environment variable `assignment` ("WORLD_SIZE=2").
  static std::string environment(const std::string& assignment);
  /// The kind of an origin: "default", "command line", "config file", "saved config" or
  /// "environment".
  static std::string kind_of(const std::string& origin);

  /// One line per value of `config`, sorted by key and aligned: `key = value  # source`, with
  /// values written as in a TOML file (strings quoted).
  std::string text(const Config& config) const;
  /// A JSON object keyed by full dotted key: {"value": ..., "source": kind, "from": origin}
  /// (and "note" when there is one); keys sorted, 2-space indent.
  std::string json(const Config& config) const;

 private:
  std::map<std::string, ValueSource> sources_;
};

/// Values shardkit settles itself, written into `config` (train_config.json keeps them) and
/// explained in `provenance`: the mesh degrees, the job name, and what "auto", an empty output
/// folder and SHARDKIT_PLUGIN_PATH come to. `dry_run`: the mesh comes from the degrees given.
void record_resolved_values(Config& config, Provenance& provenance, const Runtime& runtime,
                            const Selection& selection, const MeshShape& mesh, bool dry_run);

/// The name of the file checkpoints keep the provenance in, beside train_config.json.
inline constexpr const char* kProvenanceFile = "pretrained_model/train_config.provenance.json";

}  // namespace shardkit::train
