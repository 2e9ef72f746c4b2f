// Registry: finding plugins by (kind, name) and creating their objects, which keep the library loaded.
#include <algorithm>

#include "library.hpp"
#include "loader_internal.hpp"
#include "shardkit/comma_list.hpp"
#include "shardkit/config_resolution.hpp"
#include "shardkit/error.hpp"

namespace shardkit {
using loader_detail::describe;

namespace {

/// Owns a plugin's object and its library; the object goes first, while its code is mapped.
struct PluginHolder {
  std::shared_ptr<const void> library;  // a Registry::Library
  std::shared_ptr<Plugin> object;
  ~PluginHolder() { object.reset(); }
};

}  // namespace

const LoadedPlugin* Registry::find(const std::string& kind, const std::string& name) const {
  auto it = plugins_.find({kind, name});
  return it == plugins_.end() ? nullptr : &it->second;
}

bool LoadedPlugin::lists_capability(std::string_view name) const {
  for (std::uint32_t i = 0; i < descriptor->num_capabilities; ++i)
    if (name == descriptor->capabilities[i].name) return true;
  return false;
}

std::string Registry::canonical_name(const std::string& kind, const std::string& name) const {
  if (find(kind, name)) return name;
  for (const auto& [key, plugin] : plugins_)
    if (key.first == kind && std::find(plugin.aliases.begin(), plugin.aliases.end(), name) != plugin.aliases.end())
      return key.second;
  return name;
}

const LoadedPlugin& Registry::get(const std::string& kind, const std::string& name) const {
  if (const auto* plugin = find(kind, name)) return *plugin;
  const auto available = names(kind);
  std::vector<std::string> shown;
  for (const auto& n : available) {
    const auto& aliases = find(kind, n)->aliases;
    shown.push_back(aliases.empty() ? n : n + " (also " + join_list(aliases, ", ") + ")");
  }
  std::string list = join_list(shown, ", ");
  if (list.empty())
    list = "none (no " + kind +
           " plugin was found; check --plugins, --plugin_path and SHARDKIT_PLUGIN_PATH)";
  std::string suggestion;
  for (const auto& close : closest_names(name, available))
    suggestion += (suggestion.empty() ? "did you mean '" : "' or '") + close;
  if (!suggestion.empty()) suggestion += "'? ";
  throw ConfigError("unknown " + kind + " '" + name + "'; " + suggestion + "available: " + list);
}

std::vector<std::string> Registry::names(const std::string& kind) const {
  std::vector<std::string> out;
  for (const auto& [key, plugin] : plugins_)
    if (key.first == kind) out.push_back(key.second);
  return out;  // std::map keeps keys sorted
}

std::vector<const LoadedPlugin*> Registry::all() const {
  std::vector<const LoadedPlugin*> out;
  for (const auto& [key, plugin] : plugins_) out.push_back(&plugin);
  return out;
}

std::shared_ptr<Plugin> Registry::create(const std::string& kind, const std::string& name,
                                         const PluginContext& context) const {
  const LoadedPlugin& plugin = get(kind, name);
  const std::string what = describe(kind, name);
  std::shared_ptr<Plugin> object;
  // A shardkit error keeps its class; anything else is a failure nothing expected (a
  // RuntimeError, exit 1), not a plugin the loader refused (PluginError, exit 2).
  try {
    object = plugin.descriptor->factory(context);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw RuntimeError(what + " failed to start: " + e.what() + " (plugin " + plugin.file + ")");
  } catch (...) {
    throw RuntimeError(what + " failed to start: it threw a non-standard exception (plugin " +
                       plugin.file + ")");
  }
  if (!object)
    throw PluginError(what + " failed to start: its factory returned no object (plugin " +
                      plugin.file + ")");
  // The descriptor's list is what shardkit-env shows and what a plugin promises: hold it to that.
  for (std::uint32_t i = 0; i < plugin.descriptor->num_capabilities; ++i) {
    const CapabilitySpec& spec = plugin.descriptor->capabilities[i];
    if (object->find_capability(spec.name, spec.version) == nullptr)
      throw PluginError(what + " lists capability " + spec.name + "/" + std::to_string(spec.version) +
                        " in its descriptor, but its object does not offer it (plugin " + plugin.file +
                        "); derive the class from shardkit::WithCapabilities<...> naming it");
  }
  auto holder = std::make_shared<PluginHolder>();
  holder->library = libraries_.at(plugin.file);
  holder->object = std::move(object);
  Plugin* raw = holder->object.get();
  return std::shared_ptr<Plugin>(std::move(holder), raw);
}

void Registry::throw_wrong_type(const std::string& kind, const std::string& name) const {
  const LoadedPlugin& plugin = get(kind, name);
  throw PluginError(describe(kind, name) + " from " + plugin.file +
                    " made an object that is not a " + kind +
                    " interface; was it built against this shardkit's headers?");
}

}  // namespace shardkit
