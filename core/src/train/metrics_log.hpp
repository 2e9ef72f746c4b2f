// metrics.jsonl (one JSON line per log step) and the readable progress line.
#pragma once

#include <cstdint>
#include <map>
#include <string>

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
  double update_s = 0;           ///< mean forward+backward+update seconds per step
  double dataloading_s = 0;      ///< mean data seconds per step
  double elapsed_s = 0;          ///< seconds since training started (this process)
  std::map<std::string, double> policy;  ///< PolicyOutput::metrics, mean since the last log
};

/// Formats a double as the shortest decimal that reads back to the same value
/// ("null" for NaN and infinities, which JSON cannot hold).
std::string json_number(double value);

/// `text` escaped for a JSON string (quotes, backslashes, newlines; other controls as spaces).
std::string json_escape(const std::string& text);

/// Appends records to <output_dir>/metrics.jsonl.
class MetricsLog {
 public:
  explicit MetricsLog(std::string path) : path_(std::move(path)) {}
  /// Drops lines whose step is after `step` (left by an interrupted run being resumed).
  void truncate_after(std::int64_t step) const;
  void append(const MetricsRecord& record) const;
  /// The human-readable line printed for a record.
  static std::string progress_line(const MetricsRecord& record);

 private:
  std::string path_;
};

}  // namespace shardkit::train
