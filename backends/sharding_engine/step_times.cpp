// The per-step summary of a sharded run's waits and copies.
#include "step_times.hpp"

#include <spdlog/fmt/fmt.h>

namespace shardkit::shard {

std::string StepTimes::describe_per_step(long steps) const {
  const double per = steps > 0 ? 1e3 / static_cast<double>(steps) : 0;
  return fmt::format(
      "waiting for parameter gathers {:.2f} ms, for gradient reductions {:.2f} ms; copying in and out of flat buffers "
      "{:.2f} ms; issuing collectives {:.2f} ms",
      gather_wait * per, reduce_wait * per, copies * per, issue * per);
}

}  // namespace shardkit::shard
