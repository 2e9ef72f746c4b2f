// shardkit-env: reports versions, build flags, devices, transports, environment and plugins, as text or JSON.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <ATen/Version.h>
#include <boost/json.hpp>

#include "shardkit/comma_list.hpp"
#include "shardkit/config.hpp"
#include "shardkit/config_resolution.hpp"
#include "shardkit/error.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/logging.hpp"
#include "shardkit/torch_build.hpp"
#include "shardkit/version.hpp"

namespace {
namespace json = boost::json;

constexpr const char* kUsage =
    "usage: shardkit-env [--plugins=a.so,b.so] [--plugin_path=DIR[:DIR]] [--json] [--help]\n"
    "Prints the shardkit and LibTorch versions, build flags, devices, transports (NCCL, Gloo),\n"
    "the environment variables a launcher sets, and every plugin found or refused. Options are\n"
    "written as for shardkit-train (--plugin-path is --plugin_path).\n";

const shardkit::OptionSpec kOptions[] = {
    {"plugins", shardkit::OptionType::String, "", "plugin files to load, comma-separated, as shardkit-train's",
     nullptr, nullptr, nullptr},
    {"plugin_path", shardkit::OptionType::String, "", "folders to search for plugins, colon-separated",
     nullptr, nullptr, nullptr},
    {"json", shardkit::OptionType::Bool, "false", "one JSON object instead of text", nullptr, nullptr, nullptr},
    {"help", shardkit::OptionType::Bool, "false", "this text", nullptr, nullptr, nullptr},
};

/// The command line: the plugin search flags of shardkit-train, plus --json.
struct Options {
  shardkit::PluginSearch search;
  bool as_json = false;
  bool help = false;
};

// Read as shardkit-train reads its flags: the same parser, both spellings of each name, and an
// unknown option named with the closest known ones.
Options parse(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  Options options;
  options.help = std::find(args.begin(), args.end(), "-h") != args.end();
  if (options.help) return options;
  const auto flags = shardkit::canonical_spellings(shardkit::parse_flags(args));
  options.help = flags.count("help") != 0;
  if (options.help) return options;
  shardkit::Schema schema;
  schema.add("", kOptions, std::size(kOptions), "shardkit-env");
  const auto config = shardkit::resolve(schema, {}, flags);
  options.search.explicit_files = shardkit::split_list(config.get_string("plugins"), ',');
  options.search.dirs = shardkit::split_list(config.get_string("plugin_path"), ':');
  options.as_json = config.get_bool("json");
  return options;
}

// Everything here comes from the LibTorch in this process (its build settings, and the
// CUDA and NCCL libraries it loads), not from what happens to exist on disk.
json::object torch_report(const shardkit::TorchBuild& build, const std::string& cuda_problem) {
  json::object torch;
  torch["version"] = build.version;
  torch["cuda_build"] = !build.cuda_version.empty();
  torch["cuda_version"] = build.cuda_version.empty() ? json::value(nullptr) : json::value(build.cuda_version);
  torch["cudnn_version"] = build.cudnn_version.empty() ? json::value(nullptr) : json::value(build.cudnn_version);
  torch["blas"] = build.blas;
  torch["cpu_capability"] = build.cpu_capability;
  torch["cuda_runtime"] = build.cudart_version.empty() ? json::value(nullptr) : json::value(build.cudart_version);
  torch["cuda_device_count"] = static_cast<std::int64_t>(build.cuda_devices);
  torch["cuda_problem"] = cuda_problem.empty() ? json::value(nullptr) : json::value(cuda_problem);
  torch["build_config"] = at::show_config();
  return torch;
}

json::array comm_plugins(const shardkit::Registry& registry) {
  json::array comm;
  for (const auto& name : registry.names("comm")) comm.emplace_back(name);
  return comm;
}

json::object nccl_report(const shardkit::TorchBuild& build, const shardkit::Registry& registry) {
  json::object nccl;
  nccl["in_libtorch"] = build.nccl;
  nccl["version"] = build.nccl_version.empty() ? json::value(nullptr) : json::value(build.nccl_version);
  nccl["comm_plugin"] = registry.find("comm", "nccl") != nullptr;
  return nccl;
}

json::object gloo_report(const shardkit::TorchBuild& build, const shardkit::Registry& registry) {
  json::object gloo;
  gloo["in_libtorch"] = build.gloo;
  gloo["comm_plugins"] = comm_plugins(registry);
  return gloo;
}

json::object environment_report() {
  json::object env;
  for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                           "MASTER_PORT", "SHARDKIT_PLUGIN_PATH", "OMP_NUM_THREADS"}) {
    const char* value = std::getenv(name);
    if (value)
      env[name] = value;
    else if (std::string(name) != "OMP_NUM_THREADS")
      env[name] = nullptr;
  }
  return env;
}

json::object plugin_report(const Options& options, const shardkit::Registry& registry,
                           const std::string& discover_error) {
  json::object out;
  json::array search_dirs;
  for (const auto& d : options.search.dirs) search_dirs.emplace_back(d);
  out["plugin_path"] = std::move(search_dirs);
  json::array explicit_files;
  for (const auto& f : options.search.explicit_files) explicit_files.emplace_back(f);
  out["explicit_files"] = std::move(explicit_files);
  out["default_dir"] = shardkit::default_plugin_dir();
  json::array found;
  for (const auto* p : registry.all()) {
    const auto* d = p->descriptor;
    json::array capabilities;
    for (std::uint32_t i = 0; i < d->num_capabilities; ++i)
      capabilities.emplace_back(std::string(d->capabilities[i].name) + "/" +
                                std::to_string(d->capabilities[i].version));
    json::array traits;
    for (const auto& trait : shardkit::trait_names(d->traits)) traits.emplace_back(trait);
    json::array aliases;
    for (const auto& alias : p->aliases) aliases.emplace_back(alias);
    json::array hooks;  // its part in resolving the configuration
    if (p->config_layer) hooks.emplace_back("config_layer");
    if (p->config_check) hooks.emplace_back("config_check");
    found.push_back(json::object{{"kind", d->kind},
                                 {"name", d->name},
                                 {"version", d->plugin_version ? d->plugin_version : ""},
                                 {"file", p->file},
                                 {"summary", d->summary ? d->summary : ""},
                                 {"explicit", p->explicit_file},
                                 {"capabilities", std::move(capabilities)},
                                 {"traits", std::move(traits)},
                                 {"aliases", std::move(aliases)},
                                 {"hooks", std::move(hooks)}});
  }
  out["found"] = std::move(found);
  json::array refused;
  for (const auto& r : registry.refused())
    refused.push_back(json::object{{"file", r.file}, {"reason", r.reason}});
  out["refused"] = std::move(refused);
  if (discover_error.empty())
    out["error"] = nullptr;
  else
    out["error"] = discover_error;
  return out;
}

std::string text(const json::value& v) {
  if (v.is_null()) return "(not set)";
  if (v.is_string()) return std::string(v.as_string());
  if (v.is_bool()) return v.as_bool() ? "yes" : "no";
  return json::serialize(v);
}

void print_text(const json::object& r) {
  const auto& torch = r.at("torch").as_object();
  const auto& build = r.at("build").as_object();
  const auto& nccl = r.at("nccl").as_object();
  const auto& gloo = r.at("gloo").as_object();
  const auto& plugins = r.at("plugins").as_object();
  std::ostream& out = std::cout;
  out << "shardkit " << text(r.at("shardkit_version")) << "\n\n"
      << "LibTorch " << text(torch.at("version")) << "\n"
      << "  CUDA build:        " << text(torch.at("cuda_build"));
  if (torch.at("cuda_build").as_bool())
    out << " (CUDA " << text(torch.at("cuda_version")) << ", cuDNN " << text(torch.at("cudnn_version"))
        << ")";
  out << "\n  CUDA runtime:      "
      << (torch.at("cuda_runtime").is_null() ? "not loaded (" + text(torch.at("cuda_problem")) + ")"
                                             : "CUDA " + text(torch.at("cuda_runtime")) + ", " +
                                                   text(torch.at("cuda_device_count")) + " device(s)")
      << "\n  BLAS:              " << text(torch.at("blas")) << "\n"
      << "  CPU capability:    " << text(torch.at("cpu_capability")) << "\n"
      << "Compiler:            " << text(build.at("compiler")) << "\n"
      << "_GLIBCXX_USE_CXX11_ABI: " << text(build.at("cxx11_abi")) << "\n\n"
      << "NCCL:  " << (nccl.at("in_libtorch").as_bool() ? "in LibTorch" : "not in LibTorch")
      << (nccl.at("version").is_null() ? "" : ", version " + text(nccl.at("version")))
      << (nccl.at("comm_plugin").as_bool() ? "; comm plugin 'nccl' found" : "; no nccl comm plugin")
      << "\n"
      << "Gloo:  " << (gloo.at("in_libtorch").as_bool() ? "in LibTorch" : "not in LibTorch")
      << "; comm plugins: " << text(gloo.at("comm_plugins")) << "\n";
  out << "\nEnvironment:\n";
  for (const auto& [name, value] : r.at("environment").as_object())
    out << "  " << std::string(name) << "=" << text(value) << "\n";
  out << "\nPlugin directory next to the executable: "
      << (plugins.at("default_dir").as_string().empty() ? "(none)"
                                                        : text(plugins.at("default_dir")))
      << "\nPlugins found:\n";
  const auto& found = plugins.at("found").as_array();
  if (found.empty()) out << "  (none)\n";
  for (const auto& p : found) {
    const auto& o = p.as_object();
    out << "  " << text(o.at("kind")) << " '" << text(o.at("name")) << "' "
        << text(o.at("version")) << (o.at("explicit").as_bool() ? " [--plugins]" : "") << "\n"
        << "      " << text(o.at("file")) << "\n      " << text(o.at("summary")) << "\n";
    for (const char* list : {"aliases", "capabilities", "traits", "hooks"}) {
      const auto& items = o.at(list).as_array();
      if (items.empty()) continue;
      out << "      " << list << ":";
      for (std::size_t i = 0; i < items.size(); ++i) out << (i ? ", " : " ") << text(items[i]);
      out << "\n";
    }
  }
  const auto& refused = plugins.at("refused").as_array();
  if (!refused.empty()) out << "Plugins refused:\n";
  for (const auto& p : refused)
    out << "  " << text(p.at("file")) << "\n      " << text(p.at("reason")) << "\n";
  if (!plugins.at("error").is_null()) out << "Plugin error: " << text(plugins.at("error")) << "\n";
  out << "\nLibTorch build configuration:\n" << text(torch.at("build_config")) << "\n";
}

int run(int argc, char** argv) {
  const Options options = parse(argc, argv);
  if (options.help) {
    std::cout << kUsage;
    return 0;
  }
  // Refusals are listed in the report; warnings on stdout would only repeat them.
  shardkit::logger()->set_level(spdlog::level::err);
  shardkit::Registry registry;
  std::string discover_error;
  try {
    registry.discover(options.search);
  } catch (const shardkit::Error& e) {
    discover_error = e.what();
  }

  // CUDA's libraries are loaded here only: a training run loads them only for a CUDA device.
  std::string cuda_problem;
  shardkit::load_cuda(&cuda_problem);
  const auto torch_build = shardkit::torch_build();

  json::object report;
  report["shardkit_version"] = shardkit::version();
  report["torch"] = torch_report(torch_build, cuda_problem);
  report["build"] = json::object{{"compiler", __VERSION__},
                                 {"cxx11_abi", static_cast<std::int64_t>(_GLIBCXX_USE_CXX11_ABI)}};
  report["nccl"] = nccl_report(torch_build, registry);
  report["gloo"] = gloo_report(torch_build, registry);
  report["environment"] = environment_report();
  report["plugins"] = plugin_report(options, registry, discover_error);

  if (options.as_json)
    std::cout << json::serialize(report) << "\n";
  else
    print_text(report);
  return discover_error.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const shardkit::ConfigError& e) {
    std::cerr << "shardkit-env: " << e.what() << "\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "shardkit-env: error: " << e.what() << "\n";
    return 1;
  }
}
