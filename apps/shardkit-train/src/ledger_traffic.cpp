// The collective ledger's byte accounting (see ledger_traffic.hpp).
#include "ledger_traffic.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "shardkit/logging.hpp"

namespace shardkit::ledger {

double ring_bytes(const std::string& op, std::int64_t payload, int group_size) {
  if (group_size <= 1) return 0;
  const double s = static_cast<double>(payload), n = group_size;
  if (op == "all_reduce") return 2 * (n - 1) * s / n;
  if (op == "all_gather" || op == "reduce_scatter") return (n - 1) * s / n;
  if (op == "broadcast") return s;
  return 0;
}

bool TrafficKey::operator<(const TrafficKey& o) const {
  return std::tie(group, op, source) < std::tie(o.group, o.op, o.source);
}

void add_traffic(Traffic& a, const Traffic& b) {
  for (const auto& [key, count] : b) {
    auto& into = a[key];
    into.calls += count.calls;
    into.payload_bytes += count.payload_bytes;
    into.sent_bytes += count.sent_bytes;
    into.padding_bytes += count.padding_bytes;
    into.padding_sent_bytes += count.padding_sent_bytes;
    into.group_size = count.group_size;
  }
}

std::map<std::string, double> traffic_metrics(const Traffic& traffic) {
  std::map<std::string, double> out;
  double sent = 0, calls = 0, padding = 0;
  for (const auto& [key, count] : traffic) {
    sent += count.sent_bytes;
    padding += count.padding_sent_bytes;
    calls += static_cast<double>(count.calls);
    const auto prefix = "comm/" + key.group + "/" + key.op + "/";
    out[prefix + "bytes_sent"] += count.sent_bytes;
    out[prefix + "calls"] += static_cast<double>(count.calls);
    auto source = key.source;
    std::replace(source.begin(), source.end(), ' ', '_');
    out["comm/" + source + "/bytes_sent"] += count.sent_bytes;
  }
  out["comm/bytes_sent"] = sent;
  out["comm/bytes_received"] = sent;
  out["comm/calls"] = calls;
  out["comm/padding_bytes_sent"] = padding;
  return out;
}

namespace {

std::string bytes_text(double bytes) { return format_bytes(static_cast<std::int64_t>(std::llround(bytes))); }

}  // namespace

std::string traffic_summary(const Traffic& total, std::int64_t updates, const Traffic& startup) {
  const double per = static_cast<double>(std::max<std::int64_t>(updates, 1));
  std::string text = fmt::format("collective traffic of this rank per optimizer update (mean of {} updates; ring "
                                 "algorithms, as many bytes received as sent):",
                                 updates);
  double sent = 0, padding = 0;
  for (const auto& [key, count] : total) {
    sent += count.sent_bytes;
    padding += count.padding_sent_bytes;
    text += fmt::format("\n  {} ({} ranks) {} from {}: {:.1f} calls, {} of tensors, {} sent", key.group,
                        count.group_size, key.op, key.source, static_cast<double>(count.calls) / per,
                        bytes_text(static_cast<double>(count.payload_bytes) / per),
                        bytes_text(count.sent_bytes / per));
    if (count.padding_sent_bytes > 0)
      text += fmt::format(" ({} of it padding)", bytes_text(count.padding_sent_bytes / per));
  }
  text += fmt::format("\n  total: {} sent per update, {} of it padding", bytes_text(sent / per),
                      bytes_text(padding / per));
  double startup_sent = 0;
  std::int64_t startup_calls = 0;
  for (const auto& [key, count] : startup) {
    startup_sent += count.sent_bytes;
    startup_calls += count.calls;
  }
  if (startup_calls > 0)
    text += fmt::format("\n  start-up, before the first step (not in the above): {} calls, {} sent", startup_calls,
                        bytes_text(startup_sent));
  return text;
}

}  // namespace shardkit::ledger
