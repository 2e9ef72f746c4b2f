// The logger plugin interface: where each log step's metrics go (metrics.jsonl, TensorBoard, ...).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "shardkit/plugin.hpp"

namespace shardkit {

/// The values of one log step, already reduced across ranks (losses averaged, timings as
/// the maximum, samples/s and tokens/s for the whole cluster).
struct MetricsRow {
  std::int64_t step = 0;  ///< loop steps done
  /// Name -> value, in the order metrics.jsonl writes them: epoch, loss, lr, grad_norm,
  /// samples_per_s, tokens_per_s (only when the batches hold input_ids: a text run), update_s,
  /// dataloading_s, elapsed_s, then the policy's own metrics
  /// (PolicyOutput::metrics) by name. NaN and infinities are possible (a diverging loss).
  std::vector<std::pair<std::string, double>> values;
};

/// Where and from which step a logger writes, told once before the first row.
struct LoggerStart {
  std::string output_dir;       ///< the run folder (it exists)
  std::int64_t first_step = 0;  ///< 0 for a new run; the checkpoint's step when resuming
};

/// A logger plugin's object (kind "logger", selected with --logger.type=a,b; `jsonl` is
/// always on). Only rank 0 creates loggers, so a logger writes its files alone. A logger
/// makes each row durable before log() returns or at least regularly (a crash should lose
/// no more than the last rows), and finishes its files in finish() and in its destructor.
class MetricsLogger : public Plugin {
 public:
  ~MetricsLogger() override;
  /// Called once, before the first log(). The run folder may hold rows an interrupted attempt
  /// logged after `first_step` (a resume, or a launcher's restart from scratch with
  /// `first_step` 0); they are logged again, so a logger drops or hides them (jsonl drops
  /// them, tensorboard starts a new file whose session start makes TensorBoard drop them).
  virtual void start(const LoggerStart& start) = 0;
  /// One log step.
  virtual void log(const MetricsRow& row) = 0;
  /// Called when training ends, also after a stop by signal (default: nothing).
  virtual void finish();
};

}  // namespace shardkit
