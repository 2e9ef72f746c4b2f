// Shared pieces of the LoRA tests on a transformers Llama: the run's flags and bitwise comparison.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "../distributed/launch.hpp"

namespace shardkit::test {

/// A LoRA run from the transformers folder `base` on variable-length token data.
inline std::vector<std::string> lora_run(const std::string& out, const std::string& base, std::int64_t steps,
                                         std::vector<std::string> extra) {
  return with({"--output_dir=" + out, "--policy.path=" + base,
               "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/datasets", "--dataset.type=tokens_fixture",
               "--dataset.vocab_size=128", "--dataset.max_len=16", "--steps=" + std::to_string(steps),
               "--batch_size=4", "--optimizer.lr=1e-2", "--log_freq=1", "--seed=3", "--num_threads=1",
               "--distributed.timeout_s=120", "--peft.r=4", "--peft.lora_alpha=8"},
              extra);
}

/// The same names with bitwise equal tensors.
inline bool same_tensors(const std::map<std::string, torch::Tensor>& a, const std::map<std::string, torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a)
    if (!b.count(name) || !torch::equal(t, b.at(name))) return false;
  return true;
}

}  // namespace shardkit::test
