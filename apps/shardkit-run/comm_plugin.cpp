// load_comm_plugin(): the launcher's only contact with the plugin loader.
#include "comm_plugin.hpp"

#include <cstdlib>

#include "shardkit/config.hpp"
#include "shardkit/error.hpp"
#include "shardkit/logging.hpp"
#include "shardkit/runtime.hpp"

namespace shardkit::run {

std::shared_ptr<Comm> load_comm_plugin(Registry& registry, const std::string& name) {
  registry.discover(PluginSearch{});
  const LoadedPlugin* plugin = registry.find("comm", name);
  const std::string file = "libshardkit-comm-" + name + ".so";
  if (!plugin) {
    std::string message = "shardkit-run hosts the rendezvous store through the '" + name +
                          "' comm plugin (" + file + "), and none was found; looked in ";
    const char* env = std::getenv("SHARDKIT_PLUGIN_PATH");
    message += env && *env ? "SHARDKIT_PLUGIN_PATH=" + std::string(env) + " and " : "";
    const std::string dir = default_plugin_dir();
    message += dir.empty() ? "<executable>/../lib/shardkit/plugins (absent)" : dir;
    for (const auto& refused : registry.refused())
      if (refused.file.find(file) != std::string::npos)
        message += "; " + refused.file + " was refused: " + refused.reason;
    message += ". Build it (target shardkit-comm-" + name +
               ") or point SHARDKIT_PLUGIN_PATH at the folder holding it";
    throw PluginError(message);
  }
  // The plugin's declared options with their defaults: the launcher has no flags for them.
  Schema schema;
  const auto* d = plugin->descriptor;
  if (d->options && d->num_options > 0)
    schema.add("", d->options, d->num_options, "comm '" + name + "'");
  PluginContext context;
  context.options = resolve(schema, RawConfig{}, RawConfig{});
  context.logger = logger();
  static const Runtime launcher_runtime{};  // the launcher itself is not a rank
  context.runtime = &launcher_runtime;
  return registry.create_as<Comm>("comm", name, context);
}

}  // namespace shardkit::run
