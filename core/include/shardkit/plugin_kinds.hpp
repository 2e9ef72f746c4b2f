// The plugin kinds the host knows: one table, read by the loader, the CLI and shardkit-env.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardkit {

/// One kind of plugin and how shardkit-train selects and configures it.
struct PluginKind {
  std::string name;      ///< the descriptor's kind: "backend"
  std::string selector;  ///< the option naming the chosen plugin: "distributed_backend"
  /// Where the plugin's own options live: `prefix` + (`per_name` ? name + "." : "").
  std::string prefix;
  bool per_name;
  std::uint32_t abi_version;  ///< the kind's interface version this host was built with
  std::string option_prefix(const std::string& plugin) const {
    return per_name ? prefix + plugin + "." : prefix;
  }
};

/// Every kind, in the order --help and shardkit-env list them.
const std::vector<PluginKind>& plugin_kind_table();
/// The kind called `name`, or nullptr.
const PluginKind* find_plugin_kind(const std::string& name);
/// The kinds' names, in table order.
const std::vector<std::string>& plugin_kinds();

}  // namespace shardkit
