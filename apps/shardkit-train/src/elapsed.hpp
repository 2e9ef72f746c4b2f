// Seconds of a steady-clock duration, and since a time point, for logs and metrics.
#pragma once

#include <chrono>

namespace shardkit::train {

inline double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return seconds(std::chrono::steady_clock::now() - start);
}

}  // namespace shardkit::train
