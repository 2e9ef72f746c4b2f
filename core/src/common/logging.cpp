// The host logger: stderr-free, colour-free lines on stdout so launchers can prefix them.
#include "shardkit/logging.hpp"

#include <cstdio>

#include <cstdlib>
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
  const char* prefixed = std::getenv("SHARDKIT_LAUNCHER_PREFIXES_RANKS");
  if (world_size > 1 && !(prefixed && std::string(prefixed) == "1"))
    instance()->set_pattern("%Y-%m-%d %H:%M:%S %^%L%$ [rank " + std::to_string(rank) + "] %v");
}

void set_info_ranks(int rank, bool all_ranks) {
  instance()->set_level(all_ranks || rank == 0 ? spdlog::level::info : spdlog::level::warn);
}

std::string format_bytes(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int i = 0;
  while (v >= 1024 && i < 4) {
    v /= 1024;
    ++i;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, i == 0 ? "%.0f %s" : "%.1f %s", v, units[i]);
  return buf;
}

}  // namespace shardkit
