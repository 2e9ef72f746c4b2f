// The per-rank memory plan of a sharded run (the ZeRO paper's accounting, per unit).
#include <algorithm>

#include "engine.hpp"
#include "shardkit/logging.hpp"

namespace shardkit {

MemoryPlan ShardedBackend::Engine::plan() const {
  MemoryPlan plan;
  plan.units = static_cast<int>(units_.size());
  std::int64_t root = 0, largest_block = 0, all_blocks = 0;
  std::vector<std::int64_t> buckets;  // ZeRO 1/2: each bucket's reduction input
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const auto& unit = *units_[u];
    const auto size = unit.element_size();
    const auto gathered = unit.whole_numel() * size;
    std::int64_t local_trainable = 0;
    for (const auto& p : unit.params())
      if (p.trainable) local_trainable += p.local.numel();
    // ZeRO 1/2 keep whole parameters and, apart from them unless they hold it, the shard.
    plan.parameters += !unit.persistent()      ? unit.shard_numel() * size
                       : unit.shard_in_whole() ? unit.shard_numel() * size * shard_->size()
                                               : gathered + unit.shard_numel() * size;
    if (unit.persistent())
      buckets.push_back(shard_->size() * unit.shard_numel() * size);
    else
      plan.gradients += local_trainable * size;
    plan.optimizer += 2 * local_trainable * size;  // AdamW's exp_avg and exp_avg_sq
    plan.largest_unit = std::max(plan.largest_unit, gathered);
    if (is_root_[u]) {
      root = gathered;
    } else if (!unit.persistent()) {
      largest_block = std::max(largest_block, gathered);
      all_blocks += gathered;
    }
  }
  // ZeRO 1 keeps the averaged whole gradients in the buckets' inputs until the optimizer has
  // stepped; ZeRO 2 keeps this rank's part, and holds at most two buckets' inputs at once (one
  // filling as backward produces gradients, one reducing).
  std::sort(buckets.rbegin(), buckets.rend());
  for (std::size_t b = 0; b < buckets.size(); ++b)
    if (!options_.reduce_scatter || b < 2) plan.gradients += buckets[b];
  if (options_.reduce_scatter)
    for (const auto& unit : units_)
      if (unit->persistent()) plan.gradients += unit->shard_numel() * unit->element_size();
  for (const auto& [names, p] : whole_) {
    const auto n = p.numel() * p.element_size();
    plan.parameters += n;
    if (p.requires_grad()) {
      plan.gradients += n;
      plan.optimizer += 2 * n;
    }
  }
  // While a unit computes the next one is prefetched; without resharding after forward
  // every block stays gathered until its backward.
  const auto blocks = options_.reshard_after_forward ? std::min(all_blocks, (options_.prefetch ? 2 : 1) * largest_block)
                                                     : all_blocks;
  plan.gathered_peak = root + blocks;
  return plan;
}

}  // namespace shardkit
