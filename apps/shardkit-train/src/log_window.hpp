// The values a log line averages since the previous one, carried across a resume so that the
// first line after it averages the same steps as an uninterrupted run's.
#pragma once

#include <boost/json/object.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace shardkit {
class CommGroup;
}

namespace shardkit::train {

/// Loss and policy metrics summed over the micro-steps since the last log line.
struct LogWindow {
  std::int64_t micro_steps = 0;
  double loss_sum = 0;
  std::map<std::string, double> policy_sums;

  void clear() { *this = LogWindow{}; }
  /// The mean of every rank's window (collective over `group`): the same on every rank, and
  /// what reduce_metrics would make of it, so that a resumed run logs what the whole run would.
  LogWindow averaged_over(CommGroup& group) const;
};

/// {"micro_steps": 3, "loss_sum": 1.25, "policy": {"l1_loss": 0.5}} (exact doubles).
std::string log_window_json(const LogWindow& window);
/// Inverse of log_window_json; FormatError naming `path` when a field is missing or mistyped.
LogWindow read_log_window(const boost::json::object& obj, const std::string& path);

}  // namespace shardkit::train
