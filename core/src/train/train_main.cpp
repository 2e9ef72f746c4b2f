// shardkit-train's command line: plugin discovery, configuration layers, --help, exit codes.
#include "shardkit/train.hpp"

#include <cctype>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "shardkit/error.hpp"
#include "shardkit/logging.hpp"
#include "trainer.hpp"

namespace shardkit {
namespace {
namespace fs = std::filesystem;
using train::Selection;

/// The value of `key` as given (flags over file), or `fallback`.
std::string given(const RawConfig& flags, const RawConfig& file, const std::string& key,
                  const std::string& fallback) {
  for (const auto* layer : {&flags, &file}) {
    auto it = layer->find(key);
    if (it != layer->end()) return to_string(it->second.value);
  }
  return fallback;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

/// Whether a flag's text means true (the same spellings resolve() accepts for bools).
bool is_true(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text == "true" || text == "1" || text == "yes";
}

void print_help(const Registry& registry, const Schema& schema, const RawConfig& flags) {
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
  for (const auto& kind : {"policy", "dataset", "backend", "checkpoint_format"}) {
    const auto key = train::selector_key(kind);
    auto it = flags.find(key);
    if (it == flags.end()) continue;
    const auto name = to_string(it->second.value);
    registry.get(kind, name);  // unknown names: error listing the available ones
    const auto owner = std::string(kind) + " '" + name + "'";
    out << "\n" << schema.help_text(owner);
  }
  std::cout << out.str();
}

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const RawConfig flags = parse_flags(args);
  const Runtime runtime = Runtime::from_environment();
  set_log_rank(runtime.rank, runtime.world_size);

  // Layers: the file (an explicit --config_path, or the checkpoint's on resume), then flags.
  std::string config_path = given(flags, {}, "config_path", "");
  const bool resume = is_true(given(flags, {}, "resume", "false"));
  if (resume && config_path.empty()) {
    const auto out = given(flags, {}, "output_dir", "");
    if (out.empty())
      throw ConfigError("--resume=true needs --config_path=<output_dir>/checkpoints/last/"
                        "pretrained_model/train_config.json (or --output_dir=<run folder>)");
    config_path = (fs::path(out) / "checkpoints/last/pretrained_model/train_config.json").string();
  }
  RawConfig file;
  std::string resume_dir;
  if (!config_path.empty()) {
    if (resume) {
      resume_dir = fs::path(config_path).parent_path().parent_path().string();
      train::check_checkpoint_dir(resume_dir);
    }
    file = load_config_file(config_path);
    file.erase("resume");
  }

  // --policy.path: the saved policy's config.json fills policy options not given otherwise,
  // so a run starts from saved weights without repeating their shapes (as LeRobot does).
  if (const auto path = given(flags, file, "policy.path", ""); !path.empty()) {
    const auto saved = (fs::path(path) / "config.json").string();
    if (!fs::is_regular_file(saved))
      throw ConfigError("--policy.path=" + path + " is not a pretrained_model folder (no config.json); "
                        "point it at <run>/checkpoints/<step>/pretrained_model");
    for (auto& [key, value] : load_config_file(saved)) {
      if (key == "path" || key == "device") continue;
      file.emplace("policy." + key, std::move(value));  // never over the file's own values
    }
  }

  Registry registry;
  PluginSearch search;
  search.explicit_files = split(given(flags, file, "plugins", ""), ',');
  search.dirs = split(given(flags, file, "plugin_path", ""), ':');
  registry.discover(search);

  Selection selection;
  selection.policy = given(flags, file, "policy.type", "mlp");
  selection.dataset = given(flags, file, "dataset.type", "synthetic");
  selection.backend = train::resolve_backend(given(flags, file, "distributed_backend", "auto"),
                                             runtime.world_size);
  selection.checkpoint_format = given(flags, file, "checkpoint_format", "safetensors");
  const Schema schema = train::build_schema(registry, selection);

  if (flags.count("help")) {
    print_help(registry, schema, flags);
    return 0;
  }
  registry.get("policy", selection.policy);
  registry.get("dataset", selection.dataset);
  registry.get("backend", selection.backend);
  registry.get("checkpoint_format", selection.checkpoint_format);

  Config config = resolve(schema, file, flags);
  const auto accum = config.get_int("accelerator.gradient_accumulation.steps");
  if (config.get_int("save_freq") % accum != 0)
    throw ConfigError("--save_freq=" + std::to_string(config.get_int("save_freq")) +
                      " is not a multiple of --accelerator.gradient_accumulation.steps=" +
                      std::to_string(accum) + ": checkpoints are taken only at optimizer updates");
  if (config.get_int("steps") % accum != 0)
    throw ConfigError("--steps=" + std::to_string(config.get_int("steps")) +
                      " is not a multiple of --accelerator.gradient_accumulation.steps=" +
                      std::to_string(accum) + ": the run must end on an optimizer update");

  train::Trainer trainer(std::move(config), registry, runtime, selection, resume_dir);
  trainer.run();
  return 0;
}

}  // namespace

int train_main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const ConfigError& e) {
    std::cerr << "shardkit-train: configuration error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "shardkit-train: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace shardkit
