// Helpers for the loader tests: fixture paths, isolated searches, captured log lines.
#pragma once

#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/sinks/ostream_sink.h>

#include "shardkit/error.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/logging.hpp"

namespace shardkit::test {

/// The built fixture libshardkit-policy-<name>.so.
inline std::string fixture(const std::string& name) {
  return std::string(SHARDKIT_FIXTURE_DIR) + "/libshardkit-policy-" + name + ".so";
}

/// The fixture's canonical path, as the registry records it.
inline std::string canonical_fixture(const std::string& name) {
  return std::filesystem::canonical(fixture(name)).string();
}

/// A search that looks only where the test says (no environment, no executable dir).
inline PluginSearch isolated_search() {
  PluginSearch search;
  search.use_env = false;
  search.use_exe_dir = false;
  return search;
}

/// Copies fixtures into `dir` under their own file names.
inline void copy_fixtures(const std::string& dir, const std::vector<std::string>& names) {
  for (const auto& name : names)
    std::filesystem::copy_file(fixture(name),
                               std::filesystem::path(dir) / std::filesystem::path(fixture(name)).filename());
}

/// The message of the PluginError that loading `path` throws ("" when nothing is thrown).
inline std::string load_error(const std::string& path, bool explicit_file = false) {
  Registry registry;
  try {
    registry.load_file(path, explicit_file);
  } catch (const PluginError& e) {
    return e.what();
  }
  return "";
}

/// Collects what the host logger writes while it lives.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_)) {
    logger()->sinks().push_back(sink_);
  }
  ~LogCapture() {
    auto& sinks = logger()->sinks();
    for (auto it = sinks.begin(); it != sinks.end(); ++it)
      if (*it == sink_) {
        sinks.erase(it);
        break;
      }
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  std::string text() const { return stream_.str(); }

 private:
  std::ostringstream stream_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

}  // namespace shardkit::test
