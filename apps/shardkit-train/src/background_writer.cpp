// The background writer of asynchronous checkpoints.
#include "background_writer.hpp"

#include <utility>

#include "shardkit/error_text.hpp"

namespace shardkit::train {

BackgroundWriter::~BackgroundWriter() { wait(); }

void BackgroundWriter::start(std::function<void()> job) {
  wait();
  failure_.clear();
  ended_.store(false, std::memory_order_release);
  thread_ = std::thread([this, job = std::move(job)] {
    try {
      job();
    } catch (const std::exception& e) {
      failure_ = one_line_message(e);
      if (failure_.empty()) failure_ = "an error without a message";
    } catch (...) {
      failure_ = "an unknown error";
    }
    ended_.store(true, std::memory_order_release);
  });
}

std::string BackgroundWriter::wait() {
  if (!thread_.joinable()) return "";
  thread_.join();
  return std::exchange(failure_, std::string());
}

}  // namespace shardkit::train
