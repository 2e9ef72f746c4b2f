// glibc malloc settings for training on the CPU (see malloc_tuning.hpp).
#include "malloc_tuning.hpp"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace shardkit::train {

bool keep_freed_memory_in_process() {
#if defined(__GLIBC__)
  // 32 MiB is glibc's largest mmap threshold on 64-bit; setting it also fixes the trim
  // threshold, which the second call raises to 1 GiB of free heap top before trimming.
  const bool threshold = mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1;
  const bool trim = mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
  return threshold && trim;
#else
  return false;
#endif
}

}  // namespace shardkit::train
