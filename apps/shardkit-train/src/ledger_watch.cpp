// The collective ledger's background thread: publishes this rank's record, stops the process
// after another rank's failure report, and compares records while the main thread is blocked.
#include <future>

#include "ledger.hpp"
#include "ledger_reports.hpp"
#include "shardkit/logging.hpp"

namespace shardkit::ledger {
namespace {

constexpr const char* kAbortKey = "shardkit/ledger/abort";

std::string record_key(int rank) { return "shardkit/ledger/rank/" + std::to_string(rank); }

/// Runs `work` on a detached thread and waits at most `limit` for it: a store whose host is
/// gone can block a call for its whole socket timeout, and a report must not wait for that.
template <class T>
T bounded(std::chrono::milliseconds limit, T fallback, std::function<T()> work) {
  auto promise = std::make_shared<std::promise<T>>();
  auto future = promise->get_future();
  std::thread([promise, work = std::move(work), fallback] {
    try {
      promise->set_value(work());
    } catch (...) {
      promise->set_value(fallback);
    }
  }).detach();
  if (future.wait_for(limit) != std::future_status::ready) return fallback;
  return future.get();
}

[[noreturn]] void end_process() {
  logger()->flush();
  std::_Exit(1);
}

}  // namespace

void Ledger::watch() {
  int store_failures = 0;
  while (!stopping_) {
    {
      std::unique_lock<std::mutex> lock(watch_mutex_);
      watch_cv_.wait_for(lock, options_.publish_interval, [this] { return stopping_.load(); });
    }
    if (stopping_) return;
    try {
      publish();
      if (store_->check({kAbortKey})) return on_abort(store_->get(kAbortKey));
      compare_while_blocked();
      store_failures = 0;
    } catch (const std::exception& e) {
      // The store went away with its host: this rank's own collectives report that.
      if (++store_failures >= 5) {
        logger()->debug("collective ledger: the store is unreachable ({}); no longer publishing", e.what());
        return;
      }
    }
  }
}

void Ledger::publish() {
  // Unchanged records are published again every few seconds: a peer's report then tells a
  // live rank busy computing from one that stopped publishing.
  constexpr double kHeartbeat = 2.0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (version_ == published_version_ && wall_seconds() - published_at_ < kHeartbeat) return;
    published_version_ = version_;
    published_at_ = wall_seconds();
  }
  store_->set(record_key(rank_), to_json(snapshot()));
}

void Ledger::on_abort(const std::string& report) {
  if (failing_) return;  // this rank is reporting its own failure
  logger()->error("stopping because {}. This rank's last collectives:\n{}", report,
                  recent_lines(snapshot(), wall_seconds()));
  logger()->flush();
  // The main thread usually stops by itself: its own collective fails once a peer is gone.
  std::unique_lock<std::mutex> lock(watch_mutex_);
  if (watch_cv_.wait_for(lock, options_.stop_grace, [this] { return stopping_.load(); })) return;
  logger()->error("rank {} did not stop within {} s of that report: ending the process", rank_,
                  std::chrono::duration<double>(options_.stop_grace).count());
  end_process();
}

void Ledger::compare_while_blocked() {
  const auto mine = snapshot();
  const double now = wall_seconds();
  if (mine.waiting_seq == 0 || now - mine.waiting_since < std::chrono::duration<double>(options_.compare_after).count())
    return;
  for (const auto& peer : read_peers(std::chrono::seconds(2))) {
    const auto d = first_difference(mine.entries, peer.entries);
    if (!d) continue;
    failing_ = true;
    const auto report = divergence_report(peer.rank, d->theirs, rank_, d->mine);
    logger()->error("{}.\n  {}\n  this rank's last collectives:\n{}", report,
                    "found while rank " + std::to_string(rank_) + " was blocked in a collective that cannot complete",
                    recent_lines(mine, now));
    tell_others("rank " + std::to_string(rank_) + " found that " + report);
    end_process();
  }
}

std::vector<Snapshot> Ledger::read_peers(std::chrono::milliseconds within) {
  auto store = store_;
  const int rank = rank_, world = world_size_;
  return bounded<std::vector<Snapshot>>(within, {}, [store, rank, world] {
    std::vector<Snapshot> peers;
    for (int r = 0; r < world; ++r) {
      if (r == rank || !store->check({record_key(r)})) continue;
      try {
        peers.push_back(snapshot_from_json(store->get(record_key(r))));
      } catch (const std::exception&) {
        // a record being replaced, or from another version: skip it
      }
    }
    return peers;
  });
}

void Ledger::tell_others(const std::string& report) {
  auto store = store_;
  if (!store) return;
  bounded<bool>(std::chrono::seconds(2), false, [store, report] {
    if (!store->check({kAbortKey})) store->set(kAbortKey, report);
    return true;
  });
}

}  // namespace shardkit::ledger
