// shardkit-env: reports versions, build flags, devices, transports, environment and plugins, as text or JSON.
#include <dlfcn.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/Version.h>
#include <boost/json.hpp>
#include <torch/cuda.h>

#include "shardkit/error.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/logging.hpp"
#include "shardkit/version.hpp"

namespace {
namespace json = boost::json;

constexpr const char* kUsage =
    "usage: shardkit-env [--plugins=a.so,b.so] [--plugin_path=DIR[:DIR]] [--json] [--help]\n"
    "Prints the shardkit and LibTorch versions, build flags, devices, transports (NCCL, Gloo),\n"
    "the environment variables a launcher sets, and every plugin found or refused.\n";

/// The command line: the plugin search flags of shardkit-train, plus --json.
struct Options {
  shardkit::PluginSearch search;
  bool as_json = false;
  bool help = false;
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, sep))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      options.as_json = true;
    } else if (arg == "--help" || arg == "-h") {
      options.help = true;
    } else if (arg.rfind("--plugins=", 0) == 0) {
      for (auto& f : split(arg.substr(10), ',')) options.search.explicit_files.push_back(f);
    } else if (arg.rfind("--plugin_path=", 0) == 0) {
      for (auto& d : split(arg.substr(14), ':')) options.search.dirs.push_back(d);
    } else {
      throw shardkit::ConfigError("unknown flag '" + arg +
                                  "'; shardkit-env accepts --plugins=a.so,b.so, "
                                  "--plugin_path=DIR[:DIR], --json and --help");
    }
  }
  return options;
}

json::object torch_report() {
  const std::string config = at::show_config();
  json::object torch;
  torch["version"] = TORCH_VERSION;
  torch["cuda_build"] = shardkit::host_abi().torch_cuda != 0;
  torch["cuda_available"] = torch::cuda::is_available();
  torch["cuda_device_count"] = static_cast<std::int64_t>(torch::cuda::device_count());
  torch["build_config"] = config;
  return torch;
}

/// NCCL is found the way a CUDA comm plugin would load it: libnccl.so.2 on the loader path.
json::object nccl_report() {
  json::object nccl;
  nccl["library"] = "libnccl.so.2";
  void* handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    nccl["found"] = false;
    nccl["detail"] = why ? why : "dlopen failed";
    return nccl;
  }
  nccl["found"] = true;
  using GetVersion = int (*)(int*);
  auto get_version = reinterpret_cast<GetVersion>(dlsym(handle, "ncclGetVersion"));
  int code = 0;
  if (get_version && get_version(&code) == 0) {
    // NCCL >= 2.9 encodes major*10000 + minor*100 + patch, older ones major*1000 + ...
    const int major = code >= 10000 ? code / 10000 : code / 1000;
    const int minor = code >= 10000 ? (code % 10000) / 100 : (code % 1000) / 100;
    nccl["version"] = std::to_string(major) + "." + std::to_string(minor) + "." +
                      std::to_string(code % 100);
  } else {
    nccl["version"] = nullptr;
  }
  dlclose(handle);
  return nccl;
}

/// Gloo: whether the host's LibTorch carries it, and which comm plugins were found.
json::object gloo_report(const std::string& torch_config, const shardkit::Registry& registry) {
  json::object gloo;
  bool in_torch = torch_config.find("USE_GLOO=ON") != std::string::npos;
  std::string how = in_torch ? "LibTorch build flags say USE_GLOO=ON" : "";
  if (!in_torch) {
    // Debian's libtorch_cpu links libgloo.so.0, so it is already mapped when present.
    if (void* handle = dlopen("libgloo.so.0", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD)) {
      in_torch = true;
      how = "libgloo.so.0 is loaded with LibTorch";
      dlclose(handle);
    } else {
      how = "neither USE_GLOO=ON in LibTorch's build flags nor libgloo.so.0 loaded";
    }
  }
  gloo["in_libtorch"] = in_torch;
  gloo["detail"] = how;
  json::array comm;
  for (const auto& name : registry.names("comm")) comm.emplace_back(name);
  if (comm.empty())
    gloo["note"] = "no comm plugin found; the shardkit gloo comm plugin arrives later";
  gloo["comm_plugins"] = std::move(comm);
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
    found.push_back(json::object{{"kind", d->kind},
                                 {"name", d->name},
                                 {"version", d->plugin_version ? d->plugin_version : ""},
                                 {"file", p->file},
                                 {"summary", d->summary ? d->summary : ""},
                                 {"explicit", p->explicit_file}});
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
      << "  CUDA build:        " << text(torch.at("cuda_build")) << "\n"
      << "  CUDA available:    " << text(torch.at("cuda_available")) << " ("
      << text(torch.at("cuda_device_count")) << " device(s))\n"
      << "Compiler:            " << text(build.at("compiler")) << "\n"
      << "_GLIBCXX_USE_CXX11_ABI: " << text(build.at("cxx11_abi")) << "\n\n"
      << "NCCL:  " << (nccl.at("found").as_bool() ? "found " + text(nccl.at("library")) +
                                                         ", version " + text(nccl.at("version"))
                                                   : "not found (" + text(nccl.at("detail")) + ")")
      << "\n"
      << "Gloo:  " << (gloo.at("in_libtorch").as_bool() ? "in LibTorch" : "not found") << " ("
      << text(gloo.at("detail")) << ")\n";
  if (gloo.contains("note")) out << "       " << text(gloo.at("note")) << "\n";
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

  json::object report;
  report["shardkit_version"] = shardkit::version();
  report["torch"] = torch_report();
  report["build"] = json::object{{"compiler", __VERSION__},
                                 {"cxx11_abi", static_cast<std::int64_t>(_GLIBCXX_USE_CXX11_ABI)}};
  report["nccl"] = nccl_report();
  report["gloo"] =
      gloo_report(std::string(report["torch"].as_object()["build_config"].as_string()), registry);
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
