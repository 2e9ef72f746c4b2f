// The reduced ACT on the tiny LeRobot video dataset that the ACT training tests run.
#pragma once

#include <string>
#include <vector>

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

/// `base` followed by `extra`.
inline std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& extra) {
  base.insert(base.end(), extra.begin(), extra.end());
  return base;
}

}  // namespace shardkit::test
