// Counts the bytes of CPU tensor storage alive in the process, with a peak, for memory reports.
#pragma once

#include <cstdint>

namespace shardkit::train {

/// Routes c10's CPU allocator through a counter (once per process; later calls do nothing).
/// Storage allocated before stays uncounted, also when it is freed.
void install_cpu_tensor_counter();
/// Whether the counter is installed.
bool cpu_tensor_counter_installed();
/// Bytes of counted CPU storage alive now.
std::int64_t cpu_tensor_bytes();
/// The most bytes alive at once since the last reset_cpu_tensor_peak().
std::int64_t cpu_tensor_peak();
/// Starts a new peak from what is alive now.
void reset_cpu_tensor_peak();

}  // namespace shardkit::train
