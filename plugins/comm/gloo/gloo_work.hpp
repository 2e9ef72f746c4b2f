// A pending Gloo collective: bounded wait, emulation post-processing, and failures that say why.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <torch/csrc/distributed/c10d/Work.hpp>

#include <shardkit/comm.hpp>

#include "gloo_store.hpp"

namespace shardkit::gloo {

/// What a failure message says about the group, shared by its pending work.
struct GroupInfo {
  std::string name;
  int rank = 0;
  int size = 1;
  std::chrono::milliseconds timeout{600'000};
  /// The run's store, where a launcher leaves store_keys::kFailure (may be null).
  std::shared_ptr<GlooStore> store;
};

/// Throws "gloo <op> on group '<name>' (rank r of n) failed: <message>" plus what the
/// launcher reported, or a hint that a peer probably died.
[[noreturn]] void throw_collective_failure(const GroupInfo& group, const std::string& op,
                                           const std::string& message);

/// The launcher's one-line failure report, or "" when there is none within ~3 s (the
/// launcher notices a dead worker a moment after its peers do). Never blocks longer.
std::string launcher_report(const std::shared_ptr<GlooStore>& store);

class GlooWork final : public shardkit::Work {
 public:
  /// `finish` runs once after the c10d work completed (emulations: divide, copy back).
  GlooWork(std::shared_ptr<const GroupInfo> group, std::string op,
           c10::intrusive_ptr<c10d::Work> work, std::function<void()> finish = {});
  void wait() override;

 private:
  std::shared_ptr<const GroupInfo> group_;
  std::string op_;
  c10::intrusive_ptr<c10d::Work> work_;
  std::function<void()> finish_;
  std::mutex mutex_;
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace shardkit::gloo
