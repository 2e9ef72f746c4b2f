// Finds the comm plugin that hosts the rendezvous store for the launcher (default: gloo).
#pragma once

#include <memory>
#include <string>

#include "shardkit/comm.hpp"
#include "shardkit/loader.hpp"

namespace shardkit::run {

/// Discovers plugins with the default search (SHARDKIT_PLUGIN_PATH, then the plugin
/// folder next to the executable) and creates the comm plugin `name` with its declared
/// defaults. Throws shardkit::PluginError saying where it looked, and why a matching
/// file was refused, when there is none.
std::shared_ptr<Comm> load_comm_plugin(Registry& registry, const std::string& name = "gloo");

}  // namespace shardkit::run
