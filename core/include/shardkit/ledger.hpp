// Labels for the collective ledger, which records every collective a run issues so that a hung
// or divergent rank can be named (docs/distributed.md, "When ranks hang or diverge").
//
// A backend says what it is doing while it issues collectives; the ledger's reports then say
// "all_gather #12 on 'world' [1024] float32 (fsdp, unit layers.1, step 3)":
//
//   shardkit::CollectiveScope scope("unit " + name);
//   group.all_gather(out, in, /*async=*/true);
#pragma once

#include <cstdint>
#include <string>

namespace shardkit {

/// Labels the collectives issued while it lives (it restores the previous label when it ends).
/// Cheap: one string copy under a lock.
class CollectiveScope {
 public:
  explicit CollectiveScope(const std::string& what);
  ~CollectiveScope();
  CollectiveScope(const CollectiveScope&) = delete;
  CollectiveScope& operator=(const CollectiveScope&) = delete;

 private:
  std::string previous_;
};

/// The label of the innermost live CollectiveScope ("" when none).
std::string current_collective_scope();

/// Says that `bytes` of the whole tensor of the collectives issued while it lives are padding
/// (a flat buffer rounded up so that it splits evenly over the group): the ledger's byte
/// accounting shows what padding costs on the wire apart (docs/scaling.md, "Bytes per step").
class CollectivePadding {
 public:
  explicit CollectivePadding(std::int64_t bytes);
  ~CollectivePadding();
  CollectivePadding(const CollectivePadding&) = delete;
  CollectivePadding& operator=(const CollectivePadding&) = delete;

 private:
  std::int64_t previous_;
};

/// The bytes of padding of the innermost live CollectivePadding (0 when none).
std::int64_t current_collective_padding();

}  // namespace shardkit
