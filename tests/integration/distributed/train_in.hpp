// shardkit-train started from another working directory (relative paths, resumes from elsewhere).
#pragma once

#include <string>
#include <vector>

#include "launch.hpp"

namespace shardkit::test {

/// shardkit-train with `args`, started in folder `cwd`.
inline ProcessResult train_in(const std::string& cwd, const std::vector<std::string>& args) {
  std::string cmd = "cd " + shell_quote(cwd) + " && " + shell_quote(bin("shardkit-train"));
  for (const auto& a : args) cmd += " " + shell_quote(a);
  return run_command(cmd);
}

}  // namespace shardkit::test
