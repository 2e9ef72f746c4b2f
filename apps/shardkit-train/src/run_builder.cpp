// The run builder: a command line -> the resolved configuration, the selected plugins and the mesh.
#include "run_builder.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "shardkit/comma_list.hpp"
#include "shardkit/config_resolution.hpp"
#include "shardkit/error.hpp"
#include "shardkit/hf_folder.hpp"
#include "shardkit/pretrained_files.hpp"
#include "adapter_start.hpp"
#include "checkpoint_io.hpp"
#include "checkpoint_manifest.hpp"
#include "ema.hpp"
#include "lerobot_flags.hpp"
#include "option_checks.hpp"
#include "resume_location.hpp"
#include "resumed_mesh.hpp"
#include "saved_policy_config.hpp"

namespace shardkit::train {
namespace {
namespace fs = std::filesystem;

/// The value of `key` as given (flags over file), or `fallback`.
std::string given(const RawConfig& flags, const RawConfig& file, const std::string& key,
                  const std::string& fallback) {
  for (const auto* layer : {&flags, &file}) {
    auto it = layer->find(key);
    if (it != layer->end()) return to_string(it->second.value);
  }
  return fallback;
}

/// The value of shardkit-train's option `key` as given (flags over file), or its default.
std::string given(const RawConfig& flags, const RawConfig& file, const std::string& key) {
  return given(flags, file, key, train::default_of(key));
}

/// Whether a flag's text means true (the same spellings resolve() accepts for bools).
bool is_true(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text == "true" || text == "1" || text == "yes";
}

/// An int flag as given, or `fallback` when absent or not an int (resolve() reports those).
int given_int(const RawConfig& flags, const RawConfig& file, const std::string& key, int fallback) {
  try {
    std::size_t used = 0;
    const auto text = given(flags, file, key, std::to_string(fallback));
    const int value = std::stoi(text, &used);
    return used == text.size() ? value : fallback;
  } catch (const std::exception&) {
    return fallback;
  }
}

/// The backend whose namespace holds option `key` ("fsdp" for accelerator.fsdp.x), or ""
/// for keys outside every backend's namespace (including core's accelerator groups).
std::string backend_of_option(const std::string& key) {
  static const char* const kCoreGroups[] = {"gradient_accumulation", "mixed_precision", "fp16",
                                            "activation_checkpointing"};
  if (key.rfind("accelerator.", 0) != 0) return "";
  const auto rest = key.substr(12);
  const auto dot = rest.find('.');
  if (dot == std::string::npos) return "";
  const auto owner = rest.substr(0, dot);
  for (const auto* group : kCoreGroups)
    if (owner == group) return "";
  return owner;
}

/// Naming an option of a backend that is not the selected one is an error, even when that
/// backend is not installed.
void check_backend_namespaces(const RawConfig& flags, const RawConfig& file,
                              const std::string& backend, const std::string& requested) {
  for (const auto* layer : {&flags, &file}) {
    for (const auto& [key, value] : *layer) {
      const auto owner = backend_of_option(key);
      if (owner.empty() || owner == backend) continue;
      throw ConfigError("--" + key + " configures backend '" + owner + "', but the selected backend is '" +
                        backend + "'" + (requested == "auto" ? " (--distributed_backend=auto)" : "") +
                        "; remove it, or select --distributed_backend=" + owner);
    }
  }
}

// The loaded policies that read a Hugging Face model folder themselves (pretrained_weights): the
// model types shardkit supports, each trained by the policy of that name.
std::vector<std::string> hf_folder_policies(const Registry& registry) {
  std::vector<std::string> names;
  for (const auto& name : registry.names("policy"))
    if (registry.get("policy", name).lists_capability(PretrainedWeightsLoader::kCapabilityName)) names.push_back(name);
  return names;
}

void drop_unselected_plugin_options(RawConfig& file, const Selection& selection) {
  const std::string keep_comm = "comm." + selection.comm + ".";
  for (auto it = file.begin(); it != file.end();) {
    const auto& key = it->first;
    const auto owner = backend_of_option(key);
    const bool other_backend = !owner.empty() && owner != selection.backend;
    const bool other_comm = key.rfind("comm.", 0) == 0 && key.rfind(keep_comm, 0) != 0;
    it = other_backend || other_comm ? file.erase(it) : std::next(it);
  }
}

std::string help_text(const Registry& registry, const Schema& schema, const RawConfig& flags) {
  std::ostringstream out;
  out << "usage: shardkit-train [--key=value ...] [--config_path=FILE.toml|json]\n\n"
         "Trains a policy; every option below can also be set in the config file.\n\n"
      << schema.help_text("core") << "\n  --config_path=<path>  TOML or JSON file with options "
         "(flags override it)\n  --help  this text; add --policy.type=NAME (or another "
         "selector) to see that plugin's options\n\nPlugins found:\n";
  for (const auto* p : registry.all())
    out << "  " << p->descriptor->kind << " '" << p->descriptor->name << "' ("
        << p->descriptor->plugin_version << "): " << p->descriptor->summary << "\n";
  for (const auto& r : registry.refused()) out << "  refused " << r.file << ": " << r.reason << "\n";
  for (const auto& kind : plugin_kind_table()) {
    auto it = flags.find(kind.selector);
    if (it == flags.end()) continue;
    const auto given_names = to_string(it->second.value);
    for (const auto& name : kind.name == "logger" ? train::resolve_loggers(given_names)
                                                  : std::vector<std::string>{given_names}) {
      registry.get(kind.name, name);  // unknown names: error listing the available ones
      out << "\n" << schema.help_text(kind.name + " '" + name + "'");
    }
  }
  return out.str();
}

/// A resumed checkpoint's train_config.json. One that does not parse is a damaged checkpoint
/// file (exit 1, as a damaged model file is), not a configuration the user wrote.
RawConfig load_saved_train_config(const std::string& path) {
  try {
    return load_config_file(path);
  } catch (const ConfigError& e) {
    const auto checkpoint = fs::path(path).parent_path().parent_path().string();
    throw FormatError(std::string(e.what()) + " (the checkpoint's train_config.json is damaged or unreadable); "
                      "nothing was changed. " + train::other_checkpoint_advice(checkpoint));
  }
}


/// The configuration's layers, before any plugin is known: the flags and the file layer (the
/// --config_path file, or the checkpoint's train_config.json on --resume, under which a
/// --policy.path folder's config.json fills gaps). Notices go to `plan`.
struct Layers {
  RawConfig flags, file;
  bool resume = false;
  std::string resume_dir;  ///< the checkpoint a --resume continues from
};

Layers read_layers(const std::vector<std::string>& args, RunPlan& plan) {
  // `--save-freq` is `--save_freq`; both at once is an error naming them.
  Layers layers;
  auto& flags = layers.flags;
  auto& file = layers.file;
  flags = canonical_spellings(parse_flags(args));

  // Layers: the file (an explicit --config_path, or the checkpoint's on resume), then flags.
  std::string config_path = given(flags, {}, "config_path", "");
  const bool resume = layers.resume = is_true(given(flags, {}, "resume"));
  if (resume && config_path.empty()) {
    const auto out = given(flags, {}, "output_dir");
    if (out.empty())
      throw ConfigError("--resume=true needs --config_path=<output_dir>/checkpoints/last/"
                        "pretrained_model/train_config.json (or --output_dir=<run folder>)");
    config_path = (fs::path(out) / "checkpoints/last/pretrained_model/train_config.json").string();
  }
  std::string newest_notice;
  if (resume) config_path = train::newest_in_place_of_last(config_path, newest_notice);
  if (!newest_notice.empty()) plan.warnings.push_back(newest_notice);
  if (!config_path.empty()) {
    if (resume) {
      // Checked before the file is read, so that a folder or another file gets the
      // expected-path message rather than a parse error.
      train::locate_resume(config_path, flags, {});
    }
    file = canonical_spellings(resume ? load_saved_train_config(config_path) : load_config_file(config_path));
    file.erase("resume");
    if (resume) {
      // Said in errors and by --print_config: these values are the checkpoint's, not the user's.
      for (auto& [key, value] : file) value.origin = train::Provenance::saved(value.origin);
      // The run continues in the folder that holds the checkpoint, wherever it was
      // started from and wherever the run folder was copied.
      const auto where = train::locate_resume(config_path, flags, file);
      layers.resume_dir = where.checkpoint_dir;
      if (!where.notice.empty()) plan.infos.push_back(where.notice);
      train::check_checkpoint_dir(layers.resume_dir);
      file["output_dir"] = RawValue{where.run_dir, train::Provenance::saved("(the run folder that holds the checkpoint)")};
    }
  }

  // --policy.path at a PEFT adapter folder: the adapter trains further on its base.
  if (const auto notice = train::start_from_adapter(flags, file); !notice.empty()) plan.infos.push_back(notice);
  // --policy.path: the saved policy's config.json fills policy options not given otherwise,
  // so a run starts from saved weights without repeating their shapes (as LeRobot does).
  if (const auto path = given(flags, file, "policy.path"); !path.empty()) {
    const auto saved = (fs::path(path) / "config.json").string();
    if (!fs::is_regular_file(saved))
      throw ConfigError("--policy.path=" + path + " is not a pretrained_model folder (no config.json); "
                        "point it at <run>/checkpoints/<step>/pretrained_model or at a Hugging Face model folder");
    for (auto& [key, value] : train::read_saved_policy_config(saved)) {
      if (key == "device") continue;
      if (const auto asked = given(flags, file, "policy.type", "");
          key == "type" && !asked.empty() && asked != to_string(value.value))
        throw ConfigError("--policy.type=" + asked + ", but --policy.path=" + path + " holds a '" +
                          to_string(value.value) +
                          "' policy; leave --policy.type out to continue that policy, or drop --policy.path to "
                          "start a new " + asked + " policy");
      value.origin = train::Provenance::saved(value.origin);
      file.emplace("policy." + key, std::move(value));  // never over the file's own values
    }
  }

  return layers;
}

/// The last stage: the selected plugins' configuration layers under the flags, then every
/// option's value and every problem at once (each option's own, those across options, the
/// plugins' checks). Fills plan.config, provenance and options.
void resolve_config(Layers& layers, const Schema& schema, const Runtime& runtime, bool dry_run, RunPlan& plan) {
  auto& flags = layers.flags;
  auto& file = layers.file;
  const auto& registry = *plan.registry;
  const auto& selection = plan.selection;

  // The selected plugins' own configuration layers (zero reads a DeepSpeed config file), under the flags.
  std::vector<std::string> layer_warnings;
  for (const auto& [kind, name] : selection.plugins(runtime.multi_process()))
    if (const auto* plugin = registry.find(kind, name); plugin && plugin->config_layer)
      plugin->config_layer(ConfigLayerRequest{train::option_prefix(kind, name), &flags, &file, &layer_warnings});

  std::vector<std::string> early_errors;
  train::check_dataset_repo_id(flags, file, registry, selection.dataset, early_errors);
  auto resolution = resolve_all(schema, file, flags);
  plan.provenance = Provenance(resolution.origins);
  auto& provenance = plan.provenance;
  Config& config = resolution.config;
  train::record_resolved_values(config, provenance, runtime, selection, plan.mesh, dry_run);
  // A flag over a file value is the usual layering, not a conflict; the record says what it replaced.
  for (const auto& [key, raw] : flags)
    if (const auto it = file.find(key); it != file.end() && !resolution.refused.count(key))
      provenance.add_note(key, "over " + to_string(it->second.value) + " from " + it->second.origin);
  // Every problem at once: each option's own, then those across options.
  auto errors = early_errors;
  errors.insert(errors.end(), resolution.errors.begin(), resolution.errors.end());
  train::check_across_options(resolution, provenance, errors);
  for (auto& error : train::ema_option_errors(train::EmaOptions::from(TrainOptions::from(config))))
    errors.push_back(std::move(error));
  for (const auto& [kind, name] : selection.plugins(runtime.multi_process()))
    if (const auto* plugin = registry.find(kind, name); plugin && plugin->config_check)
      plugin->config_check(ConfigCheckRequest{train::option_prefix(kind, name), &config, &resolution.refused,
                                             runtime.world_size, &errors});
  std::vector<std::string> notices;
  train::apply_lerobot_flags(config, provenance, errors, notices);
  train::apply_peft_flags(config, provenance, errors);
  throw_config_errors(errors);

  plan.config = std::move(config);
  plan.options = TrainOptions::from(plan.config);
  plan.infos.insert(plan.infos.end(), notices.begin(), notices.end());
  if (runtime.rank == 0) plan.warnings.insert(plan.warnings.end(), layer_warnings.begin(), layer_warnings.end());
}

}  // namespace

RunPlan build_run(const std::vector<std::string>& args, const Runtime& runtime) {
  RunPlan plan;
  auto layers = read_layers(args, plan);
  auto& flags = layers.flags;
  auto& file = layers.file;
  const bool resume = layers.resume;
  plan.registry = std::make_unique<Registry>();
  Registry& registry = *plan.registry;
  PluginSearch search;
  search.explicit_files = split_list(given(flags, file, "plugins"), ',');
  search.dirs = split_list(given(flags, file, "plugin_path"), ':');
  registry.discover(search);

  Selection& selection = plan.selection;
  // A plugin's alias selects it (zero answers to AITraining's --distributed_backend=deepspeed).
  selection.policy = registry.canonical_name("policy", given(flags, file, "policy.type"));
  if (const auto path = given(flags, file, "policy.path");
      !path.empty() && !registry.find("policy", selection.policy)) {
    if (is_hf_model_folder(path))
      throw ConfigError(unsupported_hf_model_message(path, hf_model_type(path), hf_folder_policies(registry)));
    throw ConfigError("--policy.path=" + path + ": this checkpoint is a '" + selection.policy +
                      "' policy, and no plugin of that name is loaded; load its plugin with "
                      "--plugins=<its .so file> or --plugin_path=<the folder holding it>");
  }
  // LeRobot has one kind of dataset: --dataset.repo_id without --dataset.type selects it.
  const bool repo_id_selects = given(flags, file, "dataset.type", "").empty() &&
                               !given(flags, file, "dataset.repo_id", "").empty() &&
                               registry.find("dataset", "lerobot");
  if (repo_id_selects) {
    file["dataset.type"] = RawValue{std::string("lerobot"), "--dataset.repo_id (LeRobot's only kind of dataset)"};
    plan.infos.push_back("--dataset.repo_id=" + given(flags, file, "dataset.repo_id", "") +
                         " selects --dataset.type=lerobot (LeRobot's datasets are the only kind with a repo_id)");
  }
  selection.dataset = registry.canonical_name("dataset", given(flags, file, "dataset.type"));
  const auto requested_backend = registry.canonical_name("backend", given(flags, file, "distributed_backend"));
  // A resumed run keeps the checkpoint's topology (its degrees, and its backend like every saved
  // value) unless the command line changes it; only the number of processes may change alone.
  const bool saved_mesh = resume && train::keep_saved_mesh(flags, requested_backend, registry, file);
  // The mesh is resolved from the degrees as given, before any process group exists.
  const bool mesh_touched = flags.count("parallelism.dp_replicate") || flags.count("parallelism.dp_shard") ||
                            file.count("parallelism.dp_replicate") || file.count("parallelism.dp_shard");
  // A sharded backend asked for by name shards over every process unless degrees are given.
  const bool shard_by_default = !mesh_touched && requested_backend != "auto" &&
                                (train::traits_of(registry, "backend", requested_backend) & kShardsParameters);
  const int replicate = given_int(flags, file, "parallelism.dp_replicate", 1);
  const int shard = given_int(flags, file, "parallelism.dp_shard", 1);
  // A dry run plans for the degrees given, not for the processes started.
  const bool dry_run = is_true(given(flags, file, "dry_run"));
  int world = runtime.world_size;
  if (dry_run && shard > 0) world = replicate * shard;
  // The checkpoint's degrees on another number of processes: the same kind of mesh, with a warning.
  std::string mesh_notice;
  const MeshShape mesh = plan.mesh = shard_by_default ? MeshShape{1, world}
                         : saved_mesh     ? train::resumed_mesh(world, replicate, shard, mesh_notice)
                                          : resolve_mesh(world, replicate, shard, mesh_touched);
  if (!mesh_notice.empty()) plan.warnings.push_back(mesh_notice);
  selection.backend = train::resolve_backend(requested_backend, mesh, registry);
  selection.checkpoint_format =
      registry.canonical_name("checkpoint_format", given(flags, file, "checkpoint_format"));
  selection.comm = train::resolve_comm(
      registry.canonical_name("comm", given(flags, file, "distributed.comm")),
      given(flags, file, "policy.device"));
  selection.loggers = train::resolve_loggers(given(flags, file, "logger.type"));
  // LeRobot's --trackio.enable=true selects the trackio logger.
  if (is_true(given(flags, file, "trackio.enable"))) {
    if (!registry.find("logger", "trackio"))
      throw ConfigError("--trackio.enable=true records the run with the trackio logger plugin, which is not "
                        "installed (it is built when SQLite 3 is found; Debian: libsqlite3-dev); loggers "
                        "installed: " + join_list(registry.names("logger"), ", "));
    if (std::find(selection.loggers.begin(), selection.loggers.end(), "trackio") == selection.loggers.end())
      selection.loggers.push_back("trackio");
  }
  for (auto& name : selection.loggers) name = registry.canonical_name("logger", name);
  // The checkpoint's options of the backend and transport it ran with do not bind a
  // resumed run that resolves to others (e.g. ddp on 2 processes, single on 1).
  if (resume) drop_unselected_plugin_options(file, selection);
  const Schema schema = train::build_schema(registry, selection);

  if (flags.count("help")) {
    plan.help = help_text(registry, schema, flags);
    return plan;
  }
  registry.get("policy", selection.policy);
  registry.get("dataset", selection.dataset);
  registry.get("backend", selection.backend);
  registry.get("checkpoint_format", selection.checkpoint_format);
  if (runtime.multi_process()) registry.get("comm", selection.comm);
  for (const auto& name : selection.loggers) registry.get("logger", name);
  check_backend_namespaces(flags, file, selection.backend, requested_backend);
  // Refused here, before joining the other ranks (which would wait for their timeout).
  train::check_traits(registry, selection, mesh, dry_run ? world > 1 : runtime.multi_process(),
                      !dry_run && is_true(given(flags, file, "save_checkpoint")), requested_backend);

  resolve_config(layers, schema, runtime, dry_run, plan);
  plan.dry_run = dry_run;
  plan.resume_dir = layers.resume_dir;
  return plan;
}

}  // namespace shardkit::train
