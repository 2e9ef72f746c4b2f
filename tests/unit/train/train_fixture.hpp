// Shared pieces of the training tests: a small, fast configuration of shardkit-train.
#pragma once

#include <string>
#include <vector>

#include "test_support.hpp"

namespace shardkit::test {

/// Flags for a small, fast, deterministic run into `output_dir` (extra flags appended).
inline std::vector<std::string> small_run(const std::string& output_dir,
                                          std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {
      "--output_dir=" + output_dir, "--policy.hidden_dim=32", "--policy.num_blocks=2",
      "--dataset.num_samples=256", "--num_threads=1", "--seed=7"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

/// Runs shardkit-train and fails the test (showing its output) when it does not exit 0.
inline ProcessResult train_ok(const std::vector<std::string>& args) {
  auto result = run_program("shardkit-train", args);
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  return result;
}

}  // namespace shardkit::test
