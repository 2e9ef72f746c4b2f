// Waiting on c10d work with a bound, finishing local steps, and explaining failures.
#include "c10d_work.hpp"

#include "c10d_errors.hpp"

namespace shardkit::c10d_common {
namespace {

// c10d's own per-operation timeout fires at `timeout` with a precise message; the bound
// on the wait is a little later so that message normally wins.
constexpr std::chrono::milliseconds kWaitMargin{2000};

}  // namespace

C10dWork::C10dWork(std::shared_ptr<const GroupInfo> group, std::string op, WaitKind kind,
                   c10::intrusive_ptr<c10d::Work> work, std::function<void()> finish)
    : group_(std::move(group)), op_(std::move(op)), kind_(kind), work_(std::move(work)),
      finish_(std::move(finish)) {}

void C10dWork::wait() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (done_) {
    if (error_) std::rethrow_exception(error_);
    return;
  }
  done_ = true;
  try {
    std::string message;
    try {
      if (kind_ == WaitKind::Host) work_->wait(group_->timeout + kWaitMargin);
      else work_->wait();
      if (finish_) finish_();
    } catch (...) {
      message = kind_ == WaitKind::Stream || work_->isCompleted()
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
  // Drop the tensors the local steps kept alive.
  work_.reset();
  finish_ = nullptr;
}

}  // namespace shardkit::c10d_common
