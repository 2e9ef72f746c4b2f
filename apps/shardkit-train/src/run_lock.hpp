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
  /// What the destructor does to an unstarted run, for exits that skip destructors.
  void undo_unstarted();

 private:
  int fd_ = -1;
  std::string created_;    ///< the outermost folder acquire() created ("" when none)
  std::string lock_file_;  ///< the .lock file when acquire() created it in an existing folder
  bool started_ = false;
};

/// Undoes the failed start of this process's RunLock, if one is held and not started: for a
/// multi-process run leaving with std::_Exit, which runs no destructors.
void undo_failed_start();

}  // namespace shardkit::train
