// The train step: forward, backward, accumulation, loss scaling, clipping, optimizer, scheduler, EMA.
#include "train_step.hpp"

#include <torch/torch.h>

#include <cmath>

#include "shardkit/capability.hpp"
#include "shardkit/error.hpp"
#include "shardkit/ledger.hpp"
#include "shardkit/logging.hpp"
#include "shardkit/sharding_report.hpp"

namespace shardkit::train {

TrainStep::TrainStep(StepParts parts, std::int64_t accum, double max_norm, std::int64_t first_step)
    : parts_(parts), accum_(accum), max_norm_(max_norm), lr_(parts.scheduler.lr(first_step)) {}

StepOutcome TrainStep::run(std::int64_t step, const Batch& batch) {
  const auto done = step + 1;
  parts_.backend.begin_micro_step(done % accum_ == 0);
  auto output =
      timed_phase(forward_s_, done, "forward", [&] { return parts_.backend.forward(parts_.policy, batch); });
  timed_phase(backward_s_, done, "backward", [&] {
    auto scaled = step_loss_.backward_loss(output, accum_);
    if (parts_.scaler) scaled = scaled * parts_.scaler->scale();
    scaled.backward();
    parts_.backend.finish_gradients();
  });
  StepOutcome outcome;
  outcome.loss = output.loss.item<double>();
  if (!std::isfinite(outcome.loss))
    throw RuntimeError("the loss became " + std::to_string(outcome.loss) + " at step " + std::to_string(done) +
                       "; lower --optimizer.lr or check the data");
  outcome.metrics = std::move(output.metrics);
  // A summed loss is logged as the global mean of its optimizer step, once per micro-step.
  outcome.loss_part = step_loss_.summed() ? 0 : outcome.loss;
  if (done % accum_ == 0) {
    const double step_mean =
        timed_phase(update_s_, done, "optimizer step", [&] { return update(step, outcome.loss); });
    if (step_loss_.summed()) outcome.loss_part = step_mean * static_cast<double>(accum_);
    if (++timed_updates_ == 0) forward_s_ = backward_s_ = update_s_ = 0;
  }
  return outcome;
}

double TrainStep::update(std::int64_t step, double loss) {
  lr_ = parts_.scheduler.lr(step);
  double step_mean = loss;
  if (step_loss_.summed()) {
    CollectiveScope scope("trainer, loss normalizer");
    step_mean = step_loss_.finish_step(gradients(), parts_.dp);
  }
  if (unscaled_gradients_finite(step)) {
    grad_norm_ = parts_.backend.clip_grad_norm(max_norm_);
    parts_.optimizer.step(lr_);
    parts_.optimizer.zero_grad();
    parts_.backend.after_optimizer_step();
    if (parts_.ema) parts_.ema->update();  // an update fp16 skipped moved no weight: nothing to average
  } else {
    parts_.optimizer.zero_grad();
  }
  return step_mean;
}

std::string TrainStep::describe_phase_times() const {
  if (timed_updates_ < 1) return "";
  const double per = 1e3 / static_cast<double>(timed_updates_);
  return fmt::format("forward {:.2f} ms, backward {:.2f} ms (gradient reductions included), optimizer step {:.2f} ms "
                     "(the mean of the {} optimizer steps after the first)",
                     forward_s_ * per, backward_s_ * per, update_s_ * per, timed_updates_);
}

std::vector<torch::Tensor> TrainStep::gradients() const {
  std::vector<torch::Tensor> grads;
  for (const auto& p : parts_.backend.parameters()) grads.push_back(p.param.grad());
  return grads;
}

bool TrainStep::unscaled_gradients_finite(std::int64_t step) {
  auto* scaler = parts_.scaler;
  if (!scaler) return true;
  const double scale = scaler->scale();
  CollectiveScope scope("trainer, fp16 overflow check");
  const bool finite = scaler->unscale(gradients(), parts_.world);
  scaler->update(!finite);
  if (!finite)
    logger()->warn("fp16: gradients overflowed at step {} with loss scale {}: update skipped, loss scale now {} "
                   "({} skipped so far)", step + 1, scale, scaler->scale(), scaler->skipped_updates());
  return finite;
}

std::string TrainStep::unit_in_backward() const {
  const auto* sharded = capability<ShardingReport>(parts_.backend);
  return sharded ? sharded->unit_in_backward() : std::string();
}

}  // namespace shardkit::train
