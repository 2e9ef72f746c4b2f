// Shared pieces of the multi-process tests: small runs started through shardkit-run.
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace shardkit::test {

inline std::string bin(const std::string& program) { return std::string(SHARDKIT_BIN_DIR) + "/" + program; }

/// The largest |a[i] - b[i]| / |b[i]| over the common length: how far apart two loss curves are.
inline double worst_relative(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(1e-12, std::abs(b[i])));
  return worst;
}

/// `base` followed by `extra`.
inline std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& extra) {
  base.insert(base.end(), extra.begin(), extra.end());
  return base;
}

/// Flags of a small deterministic run into `output_dir`; `extra` appended (later wins).
inline std::vector<std::string> tiny_run(const std::string& output_dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--output_dir=" + output_dir, "--policy.hidden_dim=32",
                                   "--policy.num_blocks=2", "--dataset.num_samples=256",
                                   "--num_threads=1", "--seed=7", "--log_freq=1",
                                   "--distributed.timeout_s=60"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

/// The shell command: shardkit-run --nproc-per-node=N --master-port=0 [launcher] shardkit-train ARGS.
inline std::string launch_command(int nproc, const std::vector<std::string>& train_args,
                                  const std::vector<std::string>& launcher_args = {}) {
  std::string cmd = shell_quote(bin("shardkit-run")) + " --nproc-per-node=" + std::to_string(nproc) +
                    " --master-port=0 --grace-period-s=5";
  for (const auto& a : launcher_args) cmd += " " + shell_quote(a);
  cmd += " " + shell_quote(bin("shardkit-train"));
  for (const auto& a : train_args) cmd += " " + shell_quote(a);
  return cmd;
}

inline ProcessResult launch(int nproc, const std::vector<std::string>& train_args,
                            const std::vector<std::string>& launcher_args = {}) {
  return run_command(launch_command(nproc, train_args, launcher_args));
}

/// A copy of run `from` rolled back to its checkpoint `step` (later checkpoints removed,
/// `last` pointing at `step`).
inline void roll_back_copy(const std::string& from, const std::string& to, const std::string& step) {
  namespace fs = std::filesystem;
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  for (const auto& e : fs::directory_iterator(to + "/checkpoints"))
    if (e.path().filename() != step && e.path().filename() != "last") fs::remove_all(e.path());
  fs::remove(to + "/checkpoints/last");
  fs::create_directory_symlink(step, to + "/checkpoints/last");
}

/// Losses of metrics.jsonl, one per logged step.
inline std::vector<double> losses(const std::string& output_dir) {
  std::vector<double> out;
  for (const auto& line : read_metrics(output_dir)) out.push_back(line.number("loss"));
  return out;
}

}  // namespace shardkit::test
