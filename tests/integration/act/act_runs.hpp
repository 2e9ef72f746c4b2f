// The reduced ACT on the tiny LeRobot video dataset that the ACT training tests run.
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "../distributed/launch.hpp"

namespace shardkit::test {

/// Flags of a small ACT (resnet18 backbone, 2+1 encoder layers, chunk 10) on the tiny dataset,
/// one thread per process; callers add the backend, batch and step flags.
inline std::vector<std::string> act_flags(const std::string& out) {
  return {"--output_dir=" + out, "--policy.type=act", "--dataset.type=lerobot", "--dataset.repo_id=tiny/video",
          "--dataset.root=" + std::string(SHARDKIT_SOURCE_DIR) + "/tests/data/lerobot-tiny-v3/video",
          "--policy.pretrained_backbone_weights=null", "--policy.dim_model=32", "--policy.n_heads=4",
          "--policy.dim_feedforward=64", "--policy.n_encoder_layers=2", "--policy.n_vae_encoder_layers=1",
          "--policy.chunk_size=10", "--policy.n_action_steps=10", "--log_freq=1", "--optimizer.lr=3e-4",
          "--seed=3", "--num_threads=1", "--distributed.timeout_s=120"};
}

/// shardkit-train with `args` in one process (nproc 1) or `nproc` under shardkit-run, checked to
/// exit 0; returns the output.
inline std::string run_ok(int nproc, const std::vector<std::string>& args) {
  const auto r = nproc == 1 ? run_program("shardkit-train", args) : launch(nproc, args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return r.output;
}

}  // namespace shardkit::test
