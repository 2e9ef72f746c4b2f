// Shared helpers of the launcher tests: the binary, the gloo gate, worker scripts, pid checks.
#pragma once

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "skip.hpp"
#include "test_support.hpp"

namespace shardkit::test::launcher {

inline std::string launcher_path() { return std::string(SHARDKIT_BIN_DIR) + "/shardkit-run"; }

inline std::string gloo_plugin_path() {
  return std::string(SHARDKIT_PLUGIN_DIR) + "/libshardkit-comm-gloo.so";
}

/// Every worker launch needs the rendezvous store, which the gloo comm plugin hosts.
inline bool have_gloo() { return std::filesystem::exists(gloo_plugin_path()); }

/// Skips the test case, counted as a skip, when the gloo plugin is absent (a partial build);
/// scripts/run-tests.sh fails on this reason when the build made the plugin.
#define SHARDKIT_REQUIRE_GLOO()                                                             \
  do {                                                                                      \
    if (!::shardkit::test::launcher::have_gloo())                                           \
      SHARDKIT_SKIP(::shardkit::test::launcher::gloo_plugin_path()                          \
                    << " is missing; build the shardkit-comm-gloo target");                 \
  } while (0)

/// Writes an executable /bin/sh script `name` into `dir` and returns its path.
inline std::string write_script(const TempDir& dir, const std::string& name,
                                const std::string& body) {
  const std::string path = dir / name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

/// Runs shardkit-run with `args` (already shell-quoted where needed); output merged.
inline ProcessResult run_launcher(const std::string& args) {
  return run_command(shell_quote(launcher_path()) + " " + args);
}

/// Whether a process with this pid is still running: it exists and is not a zombie
/// (a zombie whose parent died waits for init to reap it, which is not the launcher's doing).
inline bool process_running(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'Z';
}

/// Reads a pid a worker wrote to a file (-1 when missing).
inline pid_t read_pid(const std::string& path) {
  std::ifstream in(path);
  long pid = -1;
  in >> pid;
  return static_cast<pid_t>(pid);
}

/// Seconds since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace shardkit::test::launcher
