// A pending c10d collective: bounded wait, post-processing steps, and failures that say why.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <torch/csrc/distributed/c10d/Work.hpp>

#include <shardkit/comm.hpp>
#include <shardkit/comm_support.hpp>

namespace shardkit::c10d_common {

/// How wait() waits for a transport's work.
enum class WaitKind {
  /// The host blocks until the result is in place, bounded by the group's timeout (Gloo).
  Host,
  /// The caller's CUDA stream is made to wait for the communication stream; the host
  /// does not block (NCCL). A lost peer is caught by c10d's watchdog after the timeout.
  Stream,
};

class C10dWork final : public shardkit::Work {
 public:
  /// `finish` runs once after the c10d work completed (on the caller's stream for
  /// WaitKind::Stream): a local division for an average, a copy back from a widened dtype.
  C10dWork(std::shared_ptr<const GroupInfo> group, std::string op, WaitKind kind,
           c10::intrusive_ptr<c10d::Work> work, std::function<void()> finish = {});
  void wait() override;

 private:
  std::shared_ptr<const GroupInfo> group_;
  std::string op_;
  WaitKind kind_;
  c10::intrusive_ptr<c10d::Work> work_;
  std::function<void()> finish_;
  std::mutex mutex_;
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace shardkit::c10d_common
