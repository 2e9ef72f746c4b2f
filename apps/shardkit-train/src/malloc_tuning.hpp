// glibc malloc settings for training on the CPU: keep freed tensor memory for the next step.
#pragma once

namespace shardkit::train {

/// Stops glibc from handing freed tensor buffers back to the kernel between steps: buffers up
/// to 32 MiB come from the heap rather than fresh mappings, and the heap top is not trimmed.
/// Every step frees and re-allocates the same activations; with glibc's defaults each of those
/// returns to the kernel and faults back in zeroed pages, ~10% of an ACT step on CPU. Peak
/// memory is unchanged; memory freed after the peak stays with the process. Returns false
/// where the C library is not glibc (nothing changed).
bool keep_freed_memory_in_process();

}  // namespace shardkit::train
