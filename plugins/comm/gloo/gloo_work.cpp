// Waiting on c10d work with a bound, finishing emulations, and explaining failures.
#include "gloo_work.hpp"

#include <future>
#include <thread>

#include <shardkit/error.hpp>

#include "c10d_errors.hpp"

namespace shardkit::gloo {
namespace {

// Gloo's own per-operation timeout fires at `timeout` with a precise message; the bound
// on the wait is a little later so that message normally wins.
constexpr std::chrono::milliseconds kWaitMargin{2000};
constexpr std::chrono::milliseconds kReportWindow{3000};

}  // namespace

std::string launcher_report(const std::shared_ptr<GlooStore>& store) {
  if (!store) return "";
  auto promise = std::make_shared<std::promise<std::string>>();
  auto future = promise->get_future();
  // A detached thread: a store on an unreachable host could block a read for its whole
  // socket timeout, and the caller must not wait for that.
  std::thread([store, promise] {
    std::string report;
    try {
      const auto deadline = std::chrono::steady_clock::now() + kReportWindow;
      while (true) {
        if (store->c10d_store()->check({store_keys::kFailure})) {
          const auto bytes = store->c10d_store()->get(store_keys::kFailure);
          report.assign(bytes.begin(), bytes.end());
          break;
        }
        if (std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    } catch (...) {
      // The store went away with its host: nothing to report.
    }
    promise->set_value(report);
  }).detach();
  if (future.wait_for(kReportWindow + std::chrono::milliseconds(500)) != std::future_status::ready)
    return "";
  return future.get();
}

void throw_collective_failure(const GroupInfo& group, const std::string& op,
                              const std::string& message) {
  const auto report = launcher_report(group.store);
  throw RuntimeError("gloo " + op + " on group '" + group.name + "' (rank " +
                     std::to_string(group.rank) + " of " + std::to_string(group.size) +
                     ") failed: " + message +
                     (report.empty() ? "; a peer rank probably exited or timed out"
                                     : "; the launcher reports: " + report));
}

GlooWork::GlooWork(std::shared_ptr<const GroupInfo> group, std::string op,
                   c10::intrusive_ptr<c10d::Work> work, std::function<void()> finish)
    : group_(std::move(group)), op_(std::move(op)), work_(std::move(work)),
      finish_(std::move(finish)) {}

void GlooWork::wait() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (done_) {
    if (error_) std::rethrow_exception(error_);
    return;
  }
  done_ = true;
  try {
    std::string message;
    try {
      work_->wait(group_->timeout + kWaitMargin);
      if (finish_) finish_();
    } catch (...) {
      message = work_->isCompleted()
                    ? current_message()
                    : "no result within " + seconds_text(group_->timeout) + " (the timeout)";
    }
    if (!message.empty()) throw_collective_failure(*group_, op_, message);
  } catch (...) {
    error_ = std::current_exception();
    work_.reset();
    finish_ = nullptr;
    throw;
  }
  // Drop the tensors the emulation kept alive.
  work_.reset();
  finish_ = nullptr;
}

}  // namespace shardkit::gloo
