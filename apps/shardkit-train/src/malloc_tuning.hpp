// glibc malloc settings for training on the CPU: keep freed tensor memory for the next step.
#pragma once

namespace shardkit::train {

/// Stops glibc from handing freed tensor buffers back to the kernel between steps: every buffer
/// comes from the heap rather than a fresh mapping of its own, whatever its size, and the heap
/// top is not trimmed below 1 GiB free. Every step frees and re-allocates the same activations;
/// with glibc's defaults each of those returns to the kernel and faults back in zeroed pages,
/// ~10% of an ACT step and ~11% of a 75 M Llama LoRA step (its 131 MB logits) on CPU. Memory
/// freed after the peak stays with the process, for the next step. Returns false where the C
/// library is not glibc (nothing changed).
bool keep_freed_memory_in_process();

}  // namespace shardkit::train
