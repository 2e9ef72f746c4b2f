// One loop step: forward, the loss to back-propagate, backward, and at the end of an
// accumulation window the update (loss normalisation, fp16 unscaling, clipping, optimizer, EMA).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "loss_scaler.hpp"
#include "shardkit/backend.hpp"
#include "shardkit/comm.hpp"
#include "shardkit/error_text.hpp"
#include "adamw.hpp"
#include "elapsed.hpp"
#include "ema.hpp"
#include "scheduler.hpp"
#include "shardkit/policy.hpp"
#include "step_loss.hpp"

namespace shardkit::train {

/// What a step gives the metrics.
struct StepOutcome {
  double loss = 0;       ///< this micro-step's loss
  /// What it adds to the log window's loss sum: the loss itself, or for a summed loss the
  /// update's global mean times its micro-steps at the update and 0 before it.
  double loss_part = 0;
  std::map<std::string, double> metrics;  ///< PolicyOutput::metrics
};

/// The parts a step drives; the trainer owns them.
struct StepParts {
  Backend& backend;
  Policy& policy;
  AdamW& optimizer;
  Scheduler& scheduler;
  LossScaler* scaler;  ///< fp16 only, else null
  CommGroup& world;
  CommGroup& dp;       ///< the data-parallel group (the loss normaliser's)
  Ema* ema = nullptr;  ///< --ema.enable only: updated after each optimizer step
};

class TrainStep {
 public:
  /// `accum` micro-steps per update, gradients clipped to `max_norm`; the learning rate
  /// reported before the first update is the scheduler's at `first_step`.
  TrainStep(StepParts parts, std::int64_t accum, double max_norm, std::int64_t first_step);

  /// Loop step `step` (0-based) on `batch` (already on the device). Throws RuntimeError when
  /// the loss is not finite.
  StepOutcome run(std::int64_t step, const Batch& batch);
  /// The learning rate and gradient norm of the last update.
  double lr() const { return lr_; }
  double grad_norm() const { return grad_norm_; }
  /// "forward 1.20 ms, backward ..." per optimizer step, the mean of the steps after the first;
  /// "" before the second.
  std::string describe_phase_times() const;

  /// Runs `body`, phase `phase` of step `done` (1-based): an exception from LibTorch or a
  /// plugin (not a shardkit error) leaves naming the step, the phase and, in backward, the
  /// wrap unit a sharded backend was running.
  template <class Body>
  auto in_phase(std::int64_t done, const char* phase, Body&& body) -> decltype(body()) {
    try {
      return body();
    } catch (...) {
      rethrow_with_context({done, phase, std::string(phase) == "backward" ? unit_in_backward() : std::string()});
    }
  }

 private:
  /// The gradients of what the optimizer steps (after synchronisation: shards or whole).
  std::vector<torch::Tensor> gradients() const;
  /// fp16: unscales the gradients; false (update skipped, scale lowered) when any rank overflowed.
  bool unscaled_gradients_finite(std::int64_t step);
  /// The update at the end of an accumulation window; the step's global mean loss for a
  /// summed loss, else `loss`.
  double update(std::int64_t step, double loss);
  std::string unit_in_backward() const;

  /// Runs `body` as in_phase() and adds its seconds to `seconds`.
  template <class Body>
  auto timed_phase(double& seconds, std::int64_t done, const char* phase, Body&& body) -> decltype(body()) {
    struct Add {
      double& to;
      std::chrono::steady_clock::time_point start;
      ~Add() { to += seconds_since(start); }
    } add{seconds, std::chrono::steady_clock::now()};
    return in_phase(done, phase, std::forward<Body>(body));
  }

  StepParts parts_;
  std::int64_t accum_;
  double max_norm_;
  StepLoss step_loss_;
  double lr_, grad_norm_ = 0;
  double forward_s_ = 0, backward_s_ = 0, update_s_ = 0;  // summed over the timed updates
  long timed_updates_ = -1;                                // the first update is left out
};

}  // namespace shardkit::train
