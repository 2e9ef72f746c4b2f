// From the loop's per-step values to the logged lines: the window since the last line, the log
// cadence, the reduction across ranks, the logger plugins and the progress line.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "log_window.hpp"
#include "metrics_log.hpp"
#include "shardkit/metrics_logger.hpp"
#include "shardkit/policy.hpp"

namespace shardkit {
class CommGroup;
}

namespace shardkit::train {

/// A text batch's tokens, padding left out: attention_mask's ones, else the labels other than
/// -100, else every input_id; nothing for a batch without input_ids (no text).
std::optional<std::int64_t> batch_tokens(const Batch& batch);

/// One loop step, as the metrics see it.
struct StepValues {
  std::int64_t done = 0;  ///< loop steps done, this one included
  bool update = false;    ///< an optimizer update ended with this step
  /// What this step adds to the window's loss sum: its own loss, or (a loss summed over an
  /// update's micro-steps) the update's global mean times its micro-steps at the update, else 0.
  double loss_part = 0;
  std::map<std::string, double> policy;  ///< PolicyOutput::metrics
  double data_s = 0;                     ///< seconds waiting for the batch
  double preprocessing_s = 0;            ///< seconds making the batch ready (tokens, device)
  double update_s = 0;                   ///< seconds of forward, backward and update
  double step_s = 0;                     ///< seconds of the whole step
};

/// The values of the update a line reports, besides the window's.
struct LineValues {
  double epoch = 0;      ///< fractional epochs done
  double lr = 0;         ///< learning rate of the last update
  double grad_norm = 0;  ///< gradient norm of the last update
  std::map<std::string, double> evaluated;  ///< eval_loss, ...: the same on every rank
  std::map<std::string, double> comm;       ///< this rank's collective traffic of the last update (comm/...)
};

/// Owns rank 0's logger plugins (other ranks have none but reduce with it all the same).
class MetricsProcessor {
 public:
  using Clock = std::chrono::steady_clock;

  /// `steps` is --steps, `log_freq` --log_freq, `batch_size` the per-rank batch.
  MetricsProcessor(std::int64_t steps, std::int64_t log_freq, std::int64_t batch_size,
                   std::vector<std::shared_ptr<MetricsLogger>> loggers);

  /// Training starts (or resumes) after step `first_step`, the window carried by its checkpoint.
  void start(std::int64_t first_step, LogWindow window, Clock::time_point now = Clock::now());
  /// Counts `batch`'s tokens (before it moves to the device: a count there would wait for it).
  void count_tokens(const Batch& batch);
  /// Adds one loop step to the window.
  void add(const StepValues& step);
  /// Whether step `done` writes a line: at an optimizer update once a multiple of --log_freq
  /// was passed (so each line averages whole updates), at the last step, and with evaluation.
  bool due(std::int64_t done, bool update, bool evaluated) const;
  /// Reduces the window across `world` (collective: every rank calls it at the same step),
  /// hands the row to the loggers, prints the progress line and starts a new window.
  MetricsRecord write_line(std::int64_t done, const LineValues& values, CommGroup& world,
                           Clock::time_point now = Clock::now());
  /// The window since the last line (what a checkpoint keeps).
  const LogWindow& window() const { return window_; }
  /// The loggers' finish() (the run ended or stopped).
  void finish();
  double elapsed_s(Clock::time_point now = Clock::now()) const;

 private:
  std::int64_t steps_, log_freq_, batch_size_;
  std::vector<std::shared_ptr<MetricsLogger>> loggers_;
  LogWindow window_;
  std::int64_t first_step_ = 0, last_logged_ = 0;
  std::int64_t timed_steps_ = 0;   ///< steps this process timed since the last line
  std::int64_t tokens_ = 0;        ///< their batches' tokens (a text run's)
  bool text_run_ = false;          ///< the batches hold input_ids
  double data_s_ = 0, preprocessing_s_ = 0, update_s_ = 0, step_s_ = 0;
  double first_loss_ = 0;          ///< the first line's loss, for the growth warning
  bool growth_warned_ = false;
  Clock::time_point start_{}, last_line_{};
};

}  // namespace shardkit::train
