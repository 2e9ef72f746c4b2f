// The plugin loader and registry: finds plugin libraries, checks them, and hands out their objects.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shardkit/plugin.hpp"
#include "shardkit/plugin_kinds.hpp"

namespace shardkit {

/// Where to look for plugins, in search order.
struct PluginSearch {
  std::vector<std::string> explicit_files;  ///< --plugins=a.so,b.so (win over duplicates)
  std::vector<std::string> dirs;            ///< --plugin_path=DIR[:DIR]
  bool use_env = true;                      ///< read SHARDKIT_PLUGIN_PATH (default true)
  bool use_exe_dir = true;                  ///< <exe>/../lib/shardkit/plugins (default true)
};

/// One plugin that passed every check.
struct LoadedPlugin {
  std::string file;  ///< canonical path of the library
  const PluginDescriptor* descriptor = nullptr;
  bool explicit_file = false;  ///< named with --plugins
  // The descriptor's later fields, read when its struct_size covers them (else absent):
  std::vector<std::string> aliases;      ///< other names that select it
  ConfigLayerFn config_layer = nullptr;  ///< its configuration layer, or nullptr
  ConfigCheckFn config_check = nullptr;  ///< its check of the resolved configuration, or nullptr

  /// Whether the descriptor lists capability `name` (at any version).
  bool lists_capability(std::string_view name) const;
};

/// A plugin file that was refused, and why (shown by shardkit-env).
struct RefusedPlugin {
  std::string file;
  std::string reason;
};

/// The names of the Trait bits in `traits` ("shards_parameters", "multi_process",
/// "accepts_sharded_state", "preferred_by_auto"), in bit order; an unknown bit is named "bit N".
std::vector<std::string> trait_names(std::uint32_t traits);

/// The registry: plugins keyed by (kind, name), owned by the application. Libraries
/// stay loaded until the registry and every object created from it are gone.
class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  /// Loads and checks one library file. Throws PluginError with the file and both
  /// values for: a file that does not load, a missing entry symbol, a null descriptor,
  /// another abi_version, struct_size, Torch version, CUDA flavour or C++ ABI, a bad
  /// kind or empty name, and a (kind, name) already taken by another file (unless
  /// `explicit_file`, which then replaces a non-explicit one with a notice). Loading
  /// the same file twice is a no-op returning the existing entry.
  const LoadedPlugin& load_file(const std::string& path, bool explicit_file = false);

  /// Loads everything `search` reaches. Explicit files that fail throw; files found by
  /// directory scans that fail are recorded in refused() and skipped with a warning.
  void discover(const PluginSearch& search);

  /// The plugin (kind, name), or nullptr.
  const LoadedPlugin* find(const std::string& kind, const std::string& name) const;
  /// The name of the plugin of `kind` that `name` selects: `name` when a plugin has it, the
  /// plugin's own name when `name` is one of its aliases, else `name` unchanged.
  std::string canonical_name(const std::string& kind, const std::string& name) const;
  /// As find(), but throws a ConfigError listing the available names of that kind.
  const LoadedPlugin& get(const std::string& kind, const std::string& name) const;
  /// Names of the plugins of one kind, sorted.
  std::vector<std::string> names(const std::string& kind) const;
  /// Every plugin, sorted by (kind, name).
  std::vector<const LoadedPlugin*> all() const;
  const std::vector<RefusedPlugin>& refused() const { return refused_; }

  /// Calls the plugin's factory and returns its object, which keeps the library loaded.
  std::shared_ptr<Plugin> create(const std::string& kind, const std::string& name,
                                 const PluginContext& context) const;

  /// Typed create(): throws PluginError if the object is not a T.
  template <class T>
  std::shared_ptr<T> create_as(const std::string& kind, const std::string& name,
                               const PluginContext& context) const {
    auto object = create(kind, name, context);
    auto typed = std::dynamic_pointer_cast<T>(object);
    if (!typed) throw_wrong_type(kind, name);
    return typed;
  }

 private:
  [[noreturn]] void throw_wrong_type(const std::string& kind, const std::string& name) const;
  struct Library;
  std::map<std::string, std::shared_ptr<Library>> libraries_;  // by canonical path
  std::map<std::pair<std::string, std::string>, LoadedPlugin> plugins_;
  std::vector<RefusedPlugin> refused_;
};

/// The directory holding built-in plugins, relative to the running executable
/// (<exe dir>/../lib/shardkit/plugins), or "" when it does not exist.
std::string default_plugin_dir();

/// The host's values that plugins are checked against.
struct HostAbi {
  std::string torch_version;
  std::uint32_t torch_cuda;
  std::uint32_t cxx11_abi;
};
HostAbi host_abi();

}  // namespace shardkit
