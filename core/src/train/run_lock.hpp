// A run folder belongs to one run: an exclusive lock on <output_dir>/.lock, held by rank 0.
#pragma once

#include <string>

namespace shardkit::train {

/// Holds flock(LOCK_EX) on <output_dir>/.lock for its life (the kernel releases it when the
/// process dies, so a lock left by a dead run never blocks). Until started() is called, the
/// folders acquire() created are removed again on destruction: a failed start leaves nothing.
class RunLock {
 public:
  RunLock() = default;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();

  /// Creates `output_dir` if needed and takes the lock; returns "" on success, else why not
  /// (another process holds it, naming its pid).
  std::string acquire(const std::string& output_dir);
  /// The run has started: keep what it created.
  void started() { started_ = true; }

 private:
  int fd_ = -1;
  std::string created_;  ///< the outermost folder acquire() created ("" when none)
  bool started_ = false;
};

}  // namespace shardkit::train
