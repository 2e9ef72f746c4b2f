// One log step's values: the row handed to the logger plugins and the readable progress line.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "shardkit/json_text.hpp"
#include "shardkit/metrics_logger.hpp"

namespace shardkit::train {

/// The values of one log step.
struct MetricsRecord {
  std::int64_t step = 0;         ///< loop steps done
  std::int64_t total_steps = 0;  ///< --steps
  std::int64_t first_step = 0;   ///< step this process started from (resume), for the ETA
  double epoch = 0;              ///< fractional epochs done
  double loss = 0;               ///< mean loss over the loop steps since the last log
  double lr = 0;                 ///< learning rate of the last update
  double grad_norm = 0;          ///< global gradient norm before clipping, last update
  double samples_per_s = 0;      ///< whole-cluster throughput since the last log
  /// Whole-cluster tokens per second since the last log: the batches' non-padding tokens
  /// (attention_mask 1, else labels other than -100, else every input_id). Unset when the
  /// batches hold no tokens (no input_ids: not a text run).
  std::optional<double> tokens_per_s;
  // LeRobot main's phase timings: means per step over the window, the slowest rank's.
  double update_s = 0;           ///< forward, backward and (at updates) the optimizer step
  double dataloading_s = 0;      ///< waiting for the loader's next batch
  double preprocessing_s = 0;    ///< the batch made ready for the step (tokens counted, moved to the device)
  double step_s = 0;             ///< the whole step: data, preprocessing and update
  double elapsed_s = 0;          ///< seconds since training started (this process)
  std::map<std::string, double> policy;  ///< PolicyOutput::metrics, mean since the last log
  /// This rank's collective traffic of the last update (the ledger's comm/... values; metrics.jsonl only).
  std::map<std::string, double> comm;
};

/// The row the logger plugins get: the record's values named as metrics.jsonl names them.
MetricsRow metrics_row(const MetricsRecord& record);

/// The human-readable line printed for a record.
std::string progress_line(const MetricsRecord& record);

}  // namespace shardkit::train
