// The metrics processor: per-step values -> the window -> reduced values -> loggers.
#include "metrics_processor.hpp"
#include "elapsed.hpp"

#include <torch/torch.h>

#include <algorithm>

#include "rank_agreement.hpp"
#include "shardkit/comm.hpp"
#include "shardkit/ledger.hpp"
#include "shardkit/logging.hpp"

namespace shardkit::train {
std::optional<std::int64_t> batch_tokens(const Batch& batch) {
  if (!batch.count("input_ids")) return std::nullopt;
  if (const auto mask = batch.find("attention_mask"); mask != batch.end())
    return mask->second.ne(0).sum().item<std::int64_t>();
  if (const auto labels = batch.find("labels"); labels != batch.end())
    return labels->second.ne(-100).sum().item<std::int64_t>();
  return batch.at("input_ids").numel();
}

MetricsProcessor::MetricsProcessor(std::int64_t steps, std::int64_t log_freq, std::int64_t batch_size,
                                   std::vector<std::shared_ptr<MetricsLogger>> loggers)
    : steps_(steps), log_freq_(log_freq), batch_size_(batch_size), loggers_(std::move(loggers)) {}

void MetricsProcessor::start(std::int64_t first_step, LogWindow window, Clock::time_point now) {
  first_step_ = last_logged_ = first_step;
  window_ = std::move(window);
  start_ = last_line_ = now;
}

void MetricsProcessor::count_tokens(const Batch& batch) {
  if (const auto tokens = batch_tokens(batch)) {
    text_run_ = true;
    tokens_ += *tokens;
  }
}

void MetricsProcessor::add(const StepValues& step) {
  window_.loss_sum += step.loss_part;
  for (const auto& [name, value] : step.policy) window_.policy_sums[name] += value;
  ++window_.micro_steps;
  ++timed_steps_;
  data_s_ += step.data_s;
  preprocessing_s_ += step.preprocessing_s;
  update_s_ += step.update_s;
  step_s_ += step.step_s;
}

bool MetricsProcessor::due(std::int64_t done, bool update, bool evaluated) const {
  return (update && done / log_freq_ != last_logged_ / log_freq_) || done == steps_ || evaluated;
}

MetricsRecord MetricsProcessor::write_line(std::int64_t done, const LineValues& values, CommGroup& world,
                                           Clock::time_point now) {
  const auto timed = static_cast<double>(std::max<std::int64_t>(1, timed_steps_));
  const auto window_steps = static_cast<double>(std::max<std::int64_t>(1, window_.micro_steps));
  const auto since_line = std::max(1e-9, seconds(now - last_line_));
  MetricsRecord r;
  r.step = done;
  r.total_steps = steps_;
  r.first_step = first_step_;
  r.epoch = values.epoch;
  r.loss = window_.loss_sum / window_steps;
  r.lr = values.lr;
  r.grad_norm = values.grad_norm;
  r.samples_per_s = static_cast<double>(timed_steps_ * batch_size_) / since_line;
  if (text_run_) r.tokens_per_s = static_cast<double>(tokens_) / since_line;
  r.update_s = update_s_ / timed;
  r.dataloading_s = data_s_ / timed;
  r.preprocessing_s = preprocessing_s_ / timed;
  r.step_s = step_s_ / timed;
  r.elapsed_s = seconds(now - start_);
  for (const auto& [name, sum] : window_.policy_sums) r.policy[name] = sum / window_steps;
  r.policy.insert(values.evaluated.begin(), values.evaluated.end());  // the same on every rank: averaging keeps it
  r.comm = values.comm;
  window_.clear();
  {
    CollectiveScope scope("trainer, metrics");
    reduce_metrics(world, r);
  }
  if (first_loss_ == 0) first_loss_ = r.loss;
  if (!growth_warned_ && r.loss > 100 * first_loss_) {
    logger()->warn("the loss grew from {:.4g} to {:.4g} (x{:.0f}) by step {} at lr {:.3e}; training may be "
                   "diverging: consider a lower --optimizer.lr", first_loss_, r.loss, r.loss / first_loss_, done,
                   values.lr);
    growth_warned_ = true;
  }
  const auto row = metrics_row(r);
  for (const auto& l : loggers_) l->log(row);
  logger()->info("{}", progress_line(r));
  update_s_ = data_s_ = preprocessing_s_ = step_s_ = 0;
  timed_steps_ = tokens_ = 0;
  last_line_ = now;
  last_logged_ = done;
  return r;
}

void MetricsProcessor::finish() {
  for (const auto& l : loggers_) l->finish();
}

double MetricsProcessor::elapsed_s(Clock::time_point now) const { return seconds(now - start_); }

}  // namespace shardkit::train
