// Provenance: the source of each resolved option, printed by --print_config and saved with checkpoints.
#include "config_provenance.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "shardkit/json_text.hpp"

namespace shardkit::train {
namespace {

const char* const kSavedConfig = "saved config ";
const char* const kEnvironment = "environment ";

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

/// The variable that gave the number of processes, for provenance notes.
std::string world_size_variable(const Runtime& runtime) {
  if (runtime.launcher == "slurm") return "SLURM_NTASKS";
  if (runtime.launcher == "openmpi") return "OMPI_COMM_WORLD_SIZE";
  return "WORLD_SIZE";
}

/// A value as a TOML or JSON file writes it: strings quoted and escaped.
std::string literal(const Value& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return "\"" + json_escape(*s) + "\"";
  return to_string(value);
}

/// The source as one readable phrase: "default", "command line --steps", "config file
/// run.toml:3:7", "saved config ...", "environment WORLD_SIZE=2", then the note.
std::string describe(const ValueSource& source) {
  const auto kind = Provenance::kind_of(source.origin);
  std::string text = kind == "command line" || kind == "config file" ? kind + " " + source.origin : source.origin;
  if (!source.note.empty()) text += "; " + source.note;
  return text;
}

}  // namespace

Provenance::Provenance(const std::map<std::string, std::string>& origins) {
  for (const auto& [key, origin] : origins) sources_[key] = ValueSource{origin, ""};
}

void Provenance::set(const std::string& key, std::string origin, std::string note) {
  sources_[key] = ValueSource{std::move(origin), std::move(note)};
}

void Provenance::add_note(const std::string& key, const std::string& note) {
  auto& source = sources_[key];
  if (source.origin.empty()) source.origin = "default";
  source.note += (source.note.empty() ? "" : "; ") + note;
}

const ValueSource* Provenance::find(const std::string& key) const {
  const auto it = sources_.find(key);
  return it == sources_.end() ? nullptr : &it->second;
}

std::string Provenance::saved(const std::string& origin) { return kSavedConfig + origin; }

std::string Provenance::environment(const std::string& variable) { return kEnvironment + variable; }

std::string Provenance::kind_of(const std::string& origin) {
  if (origin.empty() || origin == "default") return "default";
  if (starts_with(origin, "--")) return "command line";
  if (starts_with(origin, kSavedConfig)) return "saved config";
  if (starts_with(origin, kEnvironment)) return "environment";
  return "config file";
}

std::string Provenance::text(const Config& config) const {
  std::size_t key_width = 0, value_width = 0;
  for (const auto& [key, value] : config.values()) {
    key_width = std::max(key_width, key.size());
    value_width = std::max(value_width, literal(value).size());
  }
  value_width = std::min<std::size_t>(value_width, 24);  // a long path does not push every comment right
  std::string out;
  for (const auto& [key, value] : config.values()) {
    const auto text = literal(value);
    const auto* source = find(key);
    out += key + std::string(key_width - key.size(), ' ') + " = " + text +
           std::string(text.size() < value_width ? value_width - text.size() : 0, ' ') + "  # " +
           describe(source ? *source : ValueSource{"default", ""}) + "\n";
  }
  return out;
}

std::string Provenance::json(const Config& config) const {
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : config.values()) {
    const auto* found = find(key);
    const ValueSource source = found ? *found : ValueSource{"default", ""};
    out += first ? "\n" : ",\n";
    first = false;
    out += "  \"" + json_escape(key) + "\": {\"value\": " + literal(value) + ", \"source\": \"" +
           kind_of(source.origin) + "\", \"from\": \"" + json_escape(source.origin) + "\"";
    if (!source.note.empty()) out += ", \"note\": \"" + json_escape(source.note) + "\"";
    out += "}";
  }
  out += first ? "}\n" : "\n}\n";
  return out;
}

void record_resolved_values(Config& config, Provenance& provenance, const Runtime& runtime,
                            const Selection& selection, const MeshShape& mesh, bool dry_run) {
  const std::string processes = std::to_string(runtime.world_size) + " processes";
  const std::string world_size = world_size_variable(runtime) + "=" + std::to_string(runtime.world_size);
  const std::string world = dry_run                   ? "the degrees given (--dry_run)"
                            : runtime.multi_process() ? world_size + " in the environment"
                                                      : "one process (no launcher variables in the environment)";
  for (const auto& [key, degree] : {std::pair<const char*, int>{"parallelism.dp_replicate", mesh.dp_replicate},
                                    std::pair<const char*, int>{"parallelism.dp_shard", mesh.dp_shard}}) {
    const auto before = config.get_int(key);
    if (before == degree) continue;
    config.set(key, static_cast<std::int64_t>(degree));
    const auto* source = provenance.find(key);
    if (!dry_run && runtime.multi_process() && (source == nullptr || source->origin == "default"))
      provenance.set(key, Provenance::environment(world_size),
                     "the default " + std::to_string(before) + " resolved for " + processes);
    else
      provenance.add_note(key, std::to_string(before) + " resolved to " + std::to_string(degree) + " for " + world);
  }
  const auto options = TrainOptions::from(config);
  const auto& backend = options.distributed_backend;
  if (backend != selection.backend)
    provenance.add_note("distributed_backend", "resolves to " + selection.backend +
                                                   (backend == "auto" ? " for " + world : std::string()));
  if (runtime.multi_process() && options.distributed_comm != selection.comm)
    provenance.add_note("distributed.comm",
                        "resolves to " + selection.comm + " for --policy.device=" + options.policy_device);
  if (options.policy_device == "cuda")
    provenance.add_note("policy.device", "means cuda:" + std::to_string(runtime.local_rank) +
                                             " in this process (its local rank" +
                                             (runtime.multi_process() ? ", from the environment)" : ")"));
  if (options.job_name.empty()) {
    config.set("job_name", selection.policy);
    provenance.add_note("job_name", "empty means the policy type");
  }
  if (options.output_dir.empty())
    provenance.add_note("output_dir", "empty means outputs/train/<date>/<time>_<job_name>, named when the run starts");
  if (const char* dirs = std::getenv("SHARDKIT_PLUGIN_PATH"); dirs && *dirs)
    provenance.add_note("plugin_path", std::string("then SHARDKIT_PLUGIN_PATH=") + dirs + " from the environment");
}

}  // namespace shardkit::train
