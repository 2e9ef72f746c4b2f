// Evaluation on a validation dataset: the mean loss over every full batch of it, across ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "shardkit/backend.hpp"
#include "shardkit/comm.hpp"
#include "shardkit/config.hpp"
#include "shardkit/dataset.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/policy.hpp"
#include "shardkit/runtime.hpp"

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
/// `limit` > 0 reads only the first `limit` samples.
EvalResult evaluate(Backend& backend, Policy& policy, const Dataset& data, std::int64_t batch_size, CommGroup& dp,
                    const std::function<void(Batch&)>& transform, const std::string& device,
                    std::int64_t limit = 0);

/// When evaluation runs: every N loop steps, and (--eval_freq) again at the last step.
struct EvalSchedule {
  std::string flag;     ///< the option that asked for it: eval_freq or eval_steps
  std::int64_t every = 0;
  bool at_last = false;
  bool by_epoch = false;  ///< --eval_strategy=epoch: at each epoch's end (and the last step)
  /// From --eval_freq or --eval_steps (at most one is > 0) and --eval_strategy; inactive() when
  /// none asks for evaluation.
  static EvalSchedule from(std::int64_t eval_freq, std::int64_t eval_steps, const std::string& strategy);
  bool inactive() const { return every == 0 && !by_epoch; }
};

/// --eval_freq / --eval_steps: a second instance of the run's dataset plugin, on its validation
/// split, evaluated on the schedule at optimizer updates.
class Evaluation {
 public:
  /// Throws ConfigError when `schedule.every` is not a multiple of `accum` (evaluation runs at
  /// updates). `max_samples` > 0 caps the samples: the dataset's own max_eval_samples option
  /// where it has one (lerobot), else its first `max_samples`.
  Evaluation(const Registry& registry, const Config& config, const Runtime& runtime, const std::string& dataset,
             const Policy& policy, const EvalSchedule& schedule, std::int64_t accum, std::int64_t max_samples);
  Evaluation(const Evaluation&) = delete;  // the dataset plugin points at config_
  Evaluation& operator=(const Evaluation&) = delete;

  /// Whether step `done` evaluates: an update at a multiple of the schedule's N, (--eval_freq,
  /// --eval_strategy=epoch) the last of `steps`, or (epoch) an update that ended an epoch.
  bool due(std::int64_t done, bool update, std::int64_t steps, bool epoch_ended) const {
    return update && ((schedule_.every > 0 && done % schedule_.every == 0) || (schedule_.at_last && done == steps) ||
                      (schedule_.by_epoch && epoch_ended));
  }
  /// Evaluates at `step` with evaluate(); the values to log: eval_loss, and under --eval_freq
  /// eval_perplexity.
  std::map<std::string, double> run(std::int64_t step, Backend& backend, Policy& policy, std::int64_t batch_size,
                                    CommGroup& dp, const std::function<void(Batch&)>& transform,
                                    const std::string& device);

 private:
  EvalSchedule schedule_;
  std::int64_t limit_ = 0;  ///< samples evaluated; 0 = all
  Config config_;  ///< the validation dataset's options
  std::shared_ptr<Dataset> dataset_;
};

}  // namespace shardkit::train
