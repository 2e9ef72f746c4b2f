// Where plugins are looked for and what they are checked against: the kind table, host ABI, directories.
#include <algorithm>
#include <filesystem>
#include <sstream>

#include "loader_internal.hpp"
#include "shardkit/loader.hpp"

namespace shardkit {
namespace fs = std::filesystem;

const std::vector<PluginKind>& plugin_kind_table() {
  static const std::vector<PluginKind> table{
      {"policy", "policy.type", "policy.", false, kind_abi::policy},
      {"backend", "distributed_backend", "accelerator.", true, kind_abi::backend},
      {"checkpoint_format", "checkpoint_format", "checkpoint.", true, kind_abi::checkpoint_format},
      {"dataset", "dataset.type", "dataset.", false, kind_abi::dataset},
      {"comm", "distributed.comm", "comm.", true, kind_abi::comm},
      {"logger", "logger.type", "logger.", true, kind_abi::logger},
  };
  return table;
}

const PluginKind* find_plugin_kind(const std::string& name) {
  for (const auto& kind : plugin_kind_table())
    if (kind.name == name) return &kind;
  return nullptr;
}

const std::vector<std::string>& plugin_kinds() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& kind : plugin_kind_table()) out.push_back(kind.name);
    return out;
  }();
  return names;
}

HostAbi host_abi() {
  return HostAbi{TORCH_VERSION, static_cast<std::uint32_t>(SHARDKIT_TORCH_CUDA),
                 static_cast<std::uint32_t>(_GLIBCXX_USE_CXX11_ABI)};
}

std::string default_plugin_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path lib = exe.parent_path().parent_path() / "lib";
  // <prefix>/lib/shardkit/plugins, or a multiarch libdir (<prefix>/lib/<triplet>/...)
  // where GNUInstallDirs puts libraries under a /usr prefix on Debian.
  std::vector<fs::path> candidates{lib / "shardkit" / "plugins"};
  std::vector<fs::path> multiarch;
  for (fs::directory_iterator it(lib, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().find("-linux-") != std::string::npos &&
        it->is_directory(ec))
      multiarch.push_back(it->path() / "shardkit" / "plugins");
  std::sort(multiarch.begin(), multiarch.end());
  candidates.insert(candidates.end(), multiarch.begin(), multiarch.end());
  for (const auto& dir : candidates)
    if (fs::is_directory(dir, ec)) return fs::canonical(dir, ec).string();
  return "";
}

namespace loader_detail {

std::vector<std::string> plugin_files_in(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::string prefix = "libshardkit-", suffix = ".so";
    if (name.size() > prefix.size() + suffix.size() && name.rfind(prefix, 0) == 0 &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        !it->is_directory(ec))
      files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> split_path_list(const std::string& text) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, ':'))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

}  // namespace loader_detail
}  // namespace shardkit
