// MemoryPlan's one-line form: the sharding report's type, shared by the sharded backends and the trainer.
#include <string>

#include "shardkit/logging.hpp"
#include "shardkit/sharding_report.hpp"

namespace shardkit {

std::string MemoryPlan::describe() const {
  std::string out = "parameters " + format_bytes(parameters) + ", gradients " + format_bytes(gradients) +
                    ", optimizer state " + format_bytes(optimizer);
  if (units > 0)
    out += ", gathered at most " + format_bytes(gathered_peak) + " (largest of " + std::to_string(units) +
           " units " + format_bytes(largest_unit) + ")";
  return out;
}

}  // namespace shardkit
