// The host logger: stderr-free, colour-free lines on stdout so launchers can prefix them.
#include "shardkit/logging.hpp"

#include <mutex>
#include <string>

#include <spdlog/sinks/stdout_sinks.h>

namespace shardkit {
namespace {

std::shared_ptr<spdlog::logger>& instance() {
  static std::shared_ptr<spdlog::logger> log = [] {
    auto sink = std::make_shared<spdlog::sinks::stdout_sink_mt>();
    auto l = std::make_shared<spdlog::logger>("shardkit", sink);
    l->set_pattern("%Y-%m-%d %H:%M:%S %^%L%$ %v");
    l->flush_on(spdlog::level::info);
    return l;
  }();
  return log;
}

}  // namespace

std::shared_ptr<spdlog::logger> logger() { return instance(); }

void set_log_rank(int rank, int world_size) {
  if (world_size > 1)
    instance()->set_pattern("%Y-%m-%d %H:%M:%S %^%L%$ [rank " + std::to_string(rank) + "] %v");
}

}  // namespace shardkit
