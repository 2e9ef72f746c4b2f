// The collective ledger: each rank records the collectives it issues, publishes its recent ones
// through the run's store, and turns a stuck or divergent collective into a report that names
// the ranks, instead of a hang or silently mismatched data.
//
//   auto ledger = std::make_shared<ledger::Ledger>(comm->store(), rank, world, "fsdp", options);
//   mesh.wrap_groups([&](auto g) { return ledger->wrap(g); });   // every collective is recorded
//   ledger->begin_step(step); ... ledger->end_step(step);         // compared across ranks
//
// The store is a side channel that a stuck collective does not block: a background thread
// publishes this rank's record there, watches for another rank's failure report (then prints
// this rank's last collectives and ends the process), and, while this rank is blocked in a
// collective, compares its record with the peers' to find ranks that paired different calls.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <torch/types.h>

#include "ledger_entry.hpp"
#include "ledger_traffic.hpp"
#include "shardkit/comm.hpp"

namespace shardkit::ledger {

struct Options {
  bool check_steps = true;  ///< compare the ranks' sequences at every end_step()
  std::chrono::milliseconds publish_interval{200};
  /// How long the main thread may be blocked in a collective before its record is compared
  /// with the peers'.
  std::chrono::milliseconds compare_after{1000};
  /// After another rank's failure report, how long this process may take to stop by itself
  /// before the ledger ends it (exit code 1).
  std::chrono::milliseconds stop_grace{5000};
  std::size_t capacity = 64;  ///< entries kept and published
};

class Ledger : public std::enable_shared_from_this<Ledger> {
 public:
  Ledger(std::shared_ptr<Store> store, int rank, int world_size, std::string backend, Options options);
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  /// A group whose collectives are recorded here (the same object for the same group).
  std::shared_ptr<CommGroup> wrap(std::shared_ptr<CommGroup> group);

  /// Records a collective about to be issued on a group of `group_size` ranks, whose whole
  /// tensor (an all-gather's output) is `payload` bytes; returns its id for the calls below.
  std::uint64_t issue(const std::string& group, const char* op, const torch::Tensor* tensor, int group_size,
                      std::int64_t payload);
  /// The main thread blocks in the collective `id` / returned from it successfully.
  void waiting(std::uint64_t id);
  void completed(std::uint64_t id);
  /// The collective `id` failed with `message`: reports (stall_report), tells the other ranks
  /// through the store, and throws RuntimeError with the message and the report.
  [[noreturn]] void failed(std::uint64_t id, const std::string& message);

  /// The training step (1-based) whose collectives follow.
  void begin_step(std::int64_t step);
  /// Compares this window's collectives (since the last call) across the world with one small
  /// all-reduce; on a difference, names the first differing pair on every rank and throws
  /// RuntimeError.
  void end_step(std::int64_t step, CommGroup& world);

  /// This rank's record as published.
  Snapshot snapshot() const;

  /// The bytes this rank's collectives moved (ledger_traffic.hpp) from the end of the update
  /// before the last one to the end of the last (end_step()): the update's own collectives,
  /// end_step()'s check, and what the trainer issued between two updates (a metrics line).
  /// Start-up's collectives (before the first begin_step()) are counted apart.
  Traffic last_update_traffic() const;
  /// The summary of every update's traffic so far (traffic_summary()); empty before the first.
  std::string traffic_summary_text() const;

  /// Test-only fault switch: with SHARDKIT_TEST_SKIP_COLLECTIVE=<rank>:<n> in the environment,
  /// rank <rank> silently skips the n-th collective of group 'world' (as a buggy rank would, so
  /// it is not recorded either). True when the collective about to be issued on `group` is it.
  bool skip_for_test(const std::string& group);

 private:
  struct Slot {
    std::uint64_t id = 0;
    Entry entry;
  };
  Entry* find_locked(std::uint64_t id);
  void watch();
  void publish();
  void on_abort(const std::string& report);
  void compare_while_blocked();
  std::vector<Snapshot> read_peers(std::chrono::milliseconds within);
  void tell_others(const std::string& report);
  void close_update_traffic();

  std::shared_ptr<Store> store_;
  int rank_, world_size_;
  std::string backend_;
  Options options_;

  mutable std::mutex mutex_;
  std::uint64_t next_id_ = 1;
  std::deque<Slot> recent_;  // the last options_.capacity collectives
  std::map<std::string, std::uint64_t> issued_;
  std::int64_t step_ = 0;
  std::uint64_t waiting_id_ = 0;
  double waiting_since_ = 0;
  std::uint64_t window_hash_ = 0;
  std::vector<Entry> window_;  // this step's collectives (up to a bound)
  std::uint64_t window_count_ = 0;
  std::uint64_t version_ = 0, published_version_ = 0;
  double published_at_ = 0;
  std::map<const CommGroup*, std::weak_ptr<CommGroup>> wrapped_;
  Traffic traffic_, last_update_traffic_, total_traffic_;  // since the last update; the last; all
  Traffic startup_traffic_;                                 // before the first step (step 0)
  std::int64_t updates_ = 0;
  std::uint64_t skip_seq_ = 0;  // SHARDKIT_TEST_SKIP_COLLECTIVE for this rank (0 = none)

  std::atomic<bool> failing_{false}, stopping_{false};
  std::mutex watch_mutex_;
  std::condition_variable watch_cv_;
  std::thread watcher_;
};

}  // namespace shardkit::ledger
