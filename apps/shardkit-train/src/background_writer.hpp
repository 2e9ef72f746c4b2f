// The background writer of asynchronous checkpoints: one thread per rank, one save at a time.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace shardkit::train {

/// Runs one job at a time on its own thread and keeps how it ended. The destructor waits
/// for a running job (a job must end on its own: its collectives have timeouts).
class BackgroundWriter {
 public:
  BackgroundWriter() = default;
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  /// Starts `job` (after waiting for the previous one, whose outcome start() does not
  /// report: wait() first). An exception from `job` is its failure.
  void start(std::function<void()> job);
  /// Whether a job was started and has not been waited for.
  bool busy() const { return thread_.joinable(); }
  /// Whether the job started last has ended (does not block).
  bool ended() const { return ended_.load(std::memory_order_acquire); }
  /// Waits for the running job, if any: "" when it succeeded (or there was none), else its
  /// failure on one line. Each job's outcome is returned once.
  std::string wait();

 private:
  std::thread thread_;
  std::atomic<bool> ended_{true};
  std::string failure_;  ///< written by the job's thread before ended_, read after join
};

}  // namespace shardkit::train
