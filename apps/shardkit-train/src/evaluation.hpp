// Evaluation on a validation dataset: the mean loss over every full batch of it, across ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "shardkit/backend.hpp"
#include "shardkit/comm.hpp"
#include "shardkit/dataset.hpp"
#include "shardkit/policy.hpp"

namespace shardkit::train {

struct EvalResult {
  double loss = 0;            ///< mean over the validation set (summed losses: over their global count)
  std::int64_t samples = 0;   ///< samples evaluated, all ranks together
  std::int64_t left_out = 0;  ///< samples of the last partial global batch, not evaluated
};

/// Runs the policy's training forward without gradients, in eval mode, over `data`: rank r of
/// the data-parallel group `dp` reads samples r, r + dp, ... in batches of `batch_size`, every
/// rank the same number of batches (a sharded backend's forward is a collective), each batch
/// through `transform` (the run's normalization) and moved to `device`. Summed losses
/// (PolicyOutput::normalizer) are divided by their global count, mean losses averaged over
/// batches. The policy is put back into training mode.
EvalResult evaluate(Backend& backend, Policy& policy, const Dataset& data, std::int64_t batch_size, CommGroup& dp,
                    const std::function<void(Batch&)>& transform, const std::string& device);

}  // namespace shardkit::train
