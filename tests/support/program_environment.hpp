// Running a built program under extra environment variables (TRACKIO_DIR, ACCELERATE_*, ...).
#pragma once

#include <string>
#include <vector>

#include "test_support.hpp"

namespace shardkit::test {

/// run_program() of build/bin/<program> with `args`, its environment extended by `environment`
/// ("NAME=value" each).
inline ProcessResult run_program_with_environment(const std::string& program, const std::vector<std::string>& args,
                                                  const std::vector<std::string>& environment) {
  std::string command = "env";
  for (const auto& variable : environment) command += " " + shell_quote(variable);
  command += " " + shell_quote(std::string(SHARDKIT_BIN_DIR) + "/" + program);
  for (const auto& arg : args) command += " " + shell_quote(arg);
  return run_command(command);
}

}  // namespace shardkit::test
