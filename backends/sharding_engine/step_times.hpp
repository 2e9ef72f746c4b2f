// Where a sharded step's time goes besides compute: waiting for collectives, copying in and out
// of the flat buffers, issuing collectives. Logged per optimizer step at the end of a run.
#pragma once

#include <chrono>
#include <string>

namespace shardkit::shard {

/// Seconds, summed over the steps timed.
struct StepTimes {
  double gather_wait = 0;  ///< waiting for parameter all-gathers
  double reduce_wait = 0;  ///< waiting for gradient reductions (and HSDP's replica all-reduce)
  double copies = 0;       ///< gradients into reduction inputs, gathered rows into parameters, results into shards
  double issue = 0;        ///< starting collectives (Gloo copies its inputs here)

  StepTimes& operator+=(const StepTimes& other) {
    gather_wait += other.gather_wait;
    reduce_wait += other.reduce_wait;
    copies += other.copies;
    issue += other.issue;
    return *this;
  }
  double total() const { return gather_wait + reduce_wait + copies + issue; }
  /// "waiting for gathers 1.2 ms, ..." per step over `steps` steps.
  std::string describe_per_step(long steps) const;
};

/// Adds the seconds it lives to `into`.
class Stopwatch {
 public:
  explicit Stopwatch(double& into) : into_(into), start_(std::chrono::steady_clock::now()) {}
  ~Stopwatch() { into_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;

 private:
  double& into_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace shardkit::shard
