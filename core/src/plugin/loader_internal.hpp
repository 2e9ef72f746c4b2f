// Pieces of the plugin loader shared by its source files (not part of the SDK).
#pragma once

#include <string>
#include <vector>

#include "shardkit/error.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/plugin.hpp"

namespace shardkit::loader_detail {

/// Two different files provide the same (kind, name) and neither wins. Directory scans
/// rethrow it instead of recording the file as refused: the choice is ambiguous.
class DuplicatePluginError : public PluginError {
 public:
  using PluginError::PluginError;
  ~DuplicatePluginError() override;
};

/// Checks every field of a descriptor read from `file` against the host, in the order
/// of the ABI contract; throws PluginError naming the file and both values.
void check_descriptor(const PluginDescriptor* descriptor, const std::string& file);

/// The files named libshardkit-*.so directly inside `dir`, sorted by name.
std::vector<std::string> plugin_files_in(const std::string& dir);

/// Splits a colon-separated directory list, dropping empty parts.
std::vector<std::string> split_path_list(const std::string& text);

/// Whether descriptor `d` (checked) reaches byte `end`: the fields before it were in the
/// plugin's headers.
inline bool covers(const PluginDescriptor* d, std::size_t end) { return d->struct_size >= end; }

/// The registry's entry for a checked descriptor: its later fields read where it has them.
LoadedPlugin loaded_plugin(const std::string& file, const PluginDescriptor* descriptor, bool explicit_file);

/// "kind 'name'", as used in every message about one plugin.
std::string describe(const std::string& kind, const std::string& name);

}  // namespace shardkit::loader_detail
