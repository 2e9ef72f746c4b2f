// The activation memory of one micro-batch, measured for --dry_run's memory plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardkit/nn/activation_checkpointing.hpp"

namespace shardkit {
class Dataset;
class Policy;
}  // namespace shardkit

namespace shardkit::train {

/// Tensor bytes a training micro-step needs beyond the model state (parameters and
/// gradients), at its peak, per activation-checkpointing mode.
struct ActivationMemory {
  std::int64_t none = 0;
  std::int64_t selective = 0;
  std::int64_t full = 0;
  std::int64_t batch = 0;  ///< samples in the measured micro-batch
  std::int64_t of(nn::CheckpointingMode mode) const {
    return mode == nn::CheckpointingMode::Full ? full : mode == nn::CheckpointingMode::Selective ? selective : none;
  }
};

/// Runs one forward and backward of `policy` (whole, on the CPU, in training mode) on the
/// dataset's first `batch_size` samples in each mode, checkpointing the outermost blocks of
/// `classes` (selective: every `every`-th), and counts the CPU tensor bytes at the peak beyond
/// what was alive before, with every gradient allocated beforehand so that they do not count.
/// Leaves the policy's gradients unset and its blocks checkpointed as `keep` says.
ActivationMemory measure_activation_memory(Policy& policy, const Dataset& dataset, std::int64_t batch_size,
                                           const std::vector<std::string>& classes, std::int64_t every,
                                           nn::CheckpointingMode keep);

}  // namespace shardkit::train
