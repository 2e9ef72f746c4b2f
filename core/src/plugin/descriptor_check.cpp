// The loader's checks of a plugin descriptor: ABI version, layout, LibTorch flavour, C++ ABI, identity.
#include <algorithm>
#include <string>

#include "loader_internal.hpp"
#include "shardkit/loader.hpp"

namespace shardkit::loader_detail {
namespace {

std::string text_or_null(const char* text) { return text ? std::string(text) : "(null)"; }

std::string flavour(std::uint32_t cuda) { return cuda ? "a CUDA build" : "a CPU-only build"; }

std::string joined_kinds() {
  std::string out;
  for (const auto& kind : plugin_kinds()) out += (out.empty() ? "" : ", ") + kind;
  return out;
}

[[noreturn]] void refuse(const std::string& file, const std::string& why) {
  throw PluginError("plugin " + file + ": " + why);
}

}  // namespace

DuplicatePluginError::~DuplicatePluginError() = default;

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
  if (d->struct_size != sizeof(PluginDescriptor))
    refuse(file, "descriptor size differs (plugin: " + std::to_string(d->struct_size) +
                     " bytes, host: " + std::to_string(sizeof(PluginDescriptor)) +
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
    refuse(file, "unknown plugin kind '" + kind + "'; this shardkit knows: " + joined_kinds());
  if (d->name == nullptr || *d->name == '\0')
    refuse(file, "the " + kind + " plugin has an empty name; give SHARDKIT_PLUGIN() a NAME");
  if (d->factory == nullptr)
    refuse(file, describe(kind, d->name) + " has a null factory; give SHARDKIT_PLUGIN() a "
                 "FACTORY function");
}

}  // namespace shardkit::loader_detail
