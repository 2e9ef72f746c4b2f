// The loader's checks of a plugin descriptor (ABI versions, layout, LibTorch flavour, C++ ABI, identity) and its trait names.
#include <algorithm>
#include <string>

#include "loader_internal.hpp"
#include "shardkit/comma_list.hpp"
#include "shardkit/loader.hpp"

namespace shardkit::loader_detail {
namespace {

std::string text_or_null(const char* text) { return text ? std::string(text) : "(null)"; }

std::string flavour(std::uint32_t cuda) { return cuda ? "a CUDA build" : "a CPU-only build"; }

[[noreturn]] void refuse(const std::string& file, const std::string& why) {
  throw PluginError("plugin " + file + ": " + why);
}

}  // namespace

DuplicatePluginError::~DuplicatePluginError() = default;

}  // namespace shardkit::loader_detail

namespace shardkit {

std::vector<std::string> trait_names(std::uint32_t traits) {
  std::vector<std::string> out;
  for (std::uint32_t bit = 0; bit < 32; ++bit) {
    const std::uint32_t mask = 1u << bit;
    if ((traits & mask) == 0) continue;
    switch (mask) {
      case kShardsParameters: out.emplace_back("shards_parameters"); break;
      case kMultiProcess: out.emplace_back("multi_process"); break;
      case kAcceptsShardedState: out.emplace_back("accepts_sharded_state"); break;
      case kPreferredByAuto: out.emplace_back("preferred_by_auto"); break;
      default: out.push_back("bit " + std::to_string(bit));
    }
  }
  return out;
}

}  // namespace shardkit

namespace shardkit::loader_detail {

LoadedPlugin loaded_plugin(const std::string& file, const PluginDescriptor* d, bool explicit_file) {
  LoadedPlugin out{file, d, explicit_file, {}, nullptr, nullptr};
  const auto has = [d](std::size_t offset, std::size_t size) { return covers(d, offset + size); };
  if (has(offsetof(PluginDescriptor, aliases), sizeof(d->aliases)) && d->aliases != nullptr)
    out.aliases = split_list(d->aliases, ',');
  if (has(offsetof(PluginDescriptor, config_layer), sizeof(d->config_layer))) out.config_layer = d->config_layer;
  if (has(offsetof(PluginDescriptor, config_check), sizeof(d->config_check))) out.config_check = d->config_check;
  return out;
}

std::string describe(const std::string& kind, const std::string& name) {
  return kind + " '" + name + "'";
}

void check_descriptor(const PluginDescriptor* d, const std::string& file) {
  const HostAbi host = host_abi();
  if (d == nullptr)
    refuse(file, "shardkit_plugin_entry returned a null descriptor; rebuild the plugin with "
                 "SHARDKIT_PLUGIN()");
  if (d->abi_version != kPluginAbiVersion)
    refuse(file, "incompatible plugin ABI version (plugin: " + std::to_string(d->abi_version) +
                     ", host: " + std::to_string(kPluginAbiVersion) +
                     "); rebuild the plugin against this shardkit");
  // A larger descriptor comes from newer headers that added fields: the host reads the ones it
  // knows. A smaller one from older headers lacks the later fields, which then read as absent.
  if (d->struct_size < kMinDescriptorSize)
    refuse(file, "descriptor is smaller than any this shardkit reads (plugin: " + std::to_string(d->struct_size) +
                     " bytes, at least: " + std::to_string(kMinDescriptorSize) +
                     " bytes); rebuild the plugin against this shardkit's headers");
  const std::string torch = text_or_null(d->torch_version);
  if (d->torch_version == nullptr || torch != host.torch_version)
    refuse(file, "built against LibTorch " + torch + ", this shardkit runs LibTorch " +
                     host.torch_version + "; rebuild the plugin against the same LibTorch");
  if (d->torch_cuda != host.torch_cuda)
    refuse(file, "built against " + flavour(d->torch_cuda) + " of LibTorch (torch_cuda: " +
                     std::to_string(d->torch_cuda) + "), this shardkit runs " +
                     flavour(host.torch_cuda) + " (torch_cuda: " +
                     std::to_string(host.torch_cuda) +
                     "); rebuild the plugin against the same LibTorch build");
  if (d->cxx11_abi != host.cxx11_abi)
    refuse(file, "built with _GLIBCXX_USE_CXX11_ABI=" + std::to_string(d->cxx11_abi) +
                     ", this shardkit uses _GLIBCXX_USE_CXX11_ABI=" +
                     std::to_string(host.cxx11_abi) +
                     "; rebuild the plugin with the same C++ ABI setting");
  const std::string kind = text_or_null(d->kind);
  const auto& kinds = plugin_kinds();
  if (d->kind == nullptr || std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
    refuse(file, "unknown plugin kind '" + kind + "'; this shardkit knows: " + join_list(plugin_kinds(), ", "));
  const PluginKind& kind_entry = *find_plugin_kind(kind);
  if (d->kind_abi_version != kind_entry.abi_version)
    refuse(file, "built against version " + std::to_string(d->kind_abi_version) + " of the " + kind +
                     " interface, this shardkit has version " + std::to_string(kind_entry.abi_version) +
                     "; rebuild the plugin against this shardkit");
  if (d->num_capabilities > 0 && d->capabilities == nullptr)
    refuse(file, "the descriptor lists " + std::to_string(d->num_capabilities) +
                     " capabilities but no table of them; rebuild the plugin with SHARDKIT_PLUGIN_CLASS()");
  for (std::uint32_t i = 0; i < d->num_capabilities; ++i)
    if (d->capabilities[i].name == nullptr || *d->capabilities[i].name == '\0')
      refuse(file, "capability " + std::to_string(i) + " of the descriptor has no name; rebuild the plugin "
                   "with SHARDKIT_PLUGIN_CLASS()");
  if (d->name == nullptr || *d->name == '\0')
    refuse(file, "the " + kind + " plugin has an empty name; give SHARDKIT_PLUGIN() a NAME");
  if (covers(d, offsetof(PluginDescriptor, aliases) + sizeof(d->aliases)) && d->aliases != nullptr) {
    for (const auto& alias : split_list(d->aliases, ','))
      if (alias == d->name || alias == "auto")
        refuse(file, describe(kind, d->name) + " lists '" + alias + "' among its aliases ('" + d->aliases +
                     "'); list only other names (not its own, not auto, which selectors keep), comma-separated");
  }
  if (d->factory == nullptr)
    refuse(file, describe(kind, d->name) + " has a null factory; give SHARDKIT_PLUGIN() a "
                 "FACTORY function");
}

}  // namespace shardkit::loader_detail
