// Helpers for the lerobot dataset tests: the tiny datasets, the plugin loaded as shardkit-train loads it.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "shardkit/config.hpp"
#include "shardkit/dataset.hpp"
#include "shardkit/error.hpp"
#include "shardkit/loader.hpp"
#include "plugin_defaults.hpp"
#include "test_support.hpp"

namespace shardkit::test {

/// The tiny LeRobot v3.0 datasets written by LeRobot itself: "video" (AV1 mp4) or "image" (PNG).
inline std::string tiny_dataset(const std::string& variant) {
  return std::string(SHARDKIT_SOURCE_DIR) + "/tests/data/lerobot-tiny-v3/" + variant;
}

/// What LeRobotDataset[i] returned for the tiny dataset `variant` (see tests/data/lerobot-tiny-v3).
inline std::string tiny_reference(const std::string& variant) {
  return std::string(SHARDKIT_SOURCE_DIR) + "/tests/data/lerobot-tiny-v3/" + variant + "-reference.safetensors";
}

/// The delta indices the reference tensors were made with (ACT-style, fps 10).
inline DeltaIndices reference_deltas() {
  return {{"observation.state", {-1, 0}},
          {"action", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
          {"observation.images.top", {0}}};
}

/// The lerobot dataset plugin with `options` (keys without the "dataset." prefix) over its defaults.
inline std::shared_ptr<Dataset> open_lerobot(const std::map<std::string, Value>& options) {
  Registry registry;
  registry.load_file(std::string(SHARDKIT_PLUGIN_DIR) + "/libshardkit-dataset-lerobot.so");
  PluginContext ctx;
  set_option_defaults(*registry.get("dataset", "lerobot").descriptor, ctx.options);
  for (const auto& [key, value] : options) ctx.options.set(key, value);
  return registry.create_as<Dataset>("dataset", "lerobot", ctx);
}

/// The message of the error opening the dataset with `options` throws ("" when none).
inline std::string open_error(const std::map<std::string, Value>& options) {
  try {
    open_lerobot(options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

/// A writable copy of the tiny dataset `variant` inside `dir`; returns its root.
inline std::string copy_tiny(const std::string& variant, const TempDir& dir) {
  namespace fs = std::filesystem;
  const auto to = dir / variant;
  fs::copy(tiny_dataset(variant), to, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(to))
    fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
  fs::permissions(to, fs::perms::owner_write, fs::perm_options::add);
  return to;
}

/// Replaces the first `from` in the file at `path` by `to` (for editing meta/info.json).
inline void edit_file(const std::string& path, const std::string& from, const std::string& to) {
  auto text = slurp(path);
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error(path + " has no " + from);
  text.replace(at, from.size(), to);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

/// Cuts the file at `path` to `keep` of its size.
inline void truncate_file(const std::string& path, double keep) {
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, static_cast<std::uintmax_t>(static_cast<double>(size) * keep));
}

}  // namespace shardkit::test
