// glibc malloc settings for training on the CPU (see malloc_tuning.hpp).
#include "malloc_tuning.hpp"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace shardkit::train {

bool keep_freed_memory_in_process() {
#if defined(__GLIBC__)
  // No buffer gets a mapping of its own: mmap'ed buffers go back to the kernel when freed, at any
  // size (32 MiB, the largest mmap threshold glibc accepts on 64-bit, still left a Llama's logits
  // and their gradients to fresh mappings every step). Setting a threshold also fixes the trim
  // threshold, which the last call raises to 1 GiB of free heap top before trimming.
  const bool threshold = mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1;
  const bool no_mappings = mallopt(M_MMAP_MAX, 0) == 1;
  const bool trim = mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
  return threshold && no_mappings && trim;
#else
  return false;
#endif
}

}  // namespace shardkit::train
