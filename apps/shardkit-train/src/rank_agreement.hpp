// What ranks must agree on before training: rank 0's decisions, identical configurations, reduced metrics.
#pragma once

#include <functional>
#include <string>

#include "metrics_log.hpp"
#include "shardkit/comm.hpp"
#include "shardkit/config.hpp"

namespace shardkit::train {

/// Rank 0's `value`, on every rank.
std::string from_rank0(CommGroup& group, const std::string& value);

/// Runs `check` on rank 0 only (it returns "" when fine, else an error message) and
/// throws ConfigError with rank 0's message on every rank when it failed.
void rank0_verdict(CommGroup& group, const std::function<std::string()>& check);

/// Compares a hash of every rank's resolved configuration; on a mismatch throws
/// ConfigError naming the ranks and the first keys whose values differ from rank 0's.
void check_same_config(CommGroup& group, const Config& config);

/// Loss and policy metrics averaged across ranks, timings as the slowest rank's, throughput
/// (samples and tokens per second) summed.
void reduce_metrics(CommGroup& group, MetricsRecord& record);

/// The stop signal any rank received (the highest number when they differ; 0 = none),
/// so that all ranks stop after the same step and name the same signal.
int stop_signal_of_any_rank(CommGroup& group, int mine);

/// Why the ranks stop after this step, agreed: a stop signal (as stop_signal_of_any_rank) and
/// whether any rank's background checkpoint save failed.
struct StopReasons {
  int signal = 0;
  bool failed_save = false;
};
/// Every rank's reasons combined, in one collective.
StopReasons stop_reasons_of_any_rank(CommGroup& group, StopReasons mine);

}  // namespace shardkit::train
