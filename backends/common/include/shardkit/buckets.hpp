// Gradient bucket planning shared by every backend: which parameters travel together in one collective.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <c10/core/ScalarType.h>

namespace shardkit {

/// One parameter as the planner sees it.
struct BucketItem {
  std::int64_t bytes = 0;                  ///< size of its gradient in bytes
  c10::ScalarType dtype = c10::kFloat;     ///< a bucket never mixes dtypes
};

/// Groups parameters into buckets for bucketed gradient collectives.
///
/// `items` are in registration order (Module::parameters()). Buckets are filled walking
/// the parameters in REVERSE registration order, the order their gradients become ready
/// in backward. Each dtype has one open bucket; a parameter joins the open bucket of its
/// dtype unless that would take it over `cap_bytes`, in which case the open bucket is
/// closed and a new one started (so a parameter larger than the cap gets a bucket of its
/// own). Inside a bucket indices are in reverse registration order. Buckets are returned
/// in the order they complete in backward (by their lowest index, descending), which is
/// the order collectives must be launched on every rank. Every index appears exactly once.
///
///   plan_buckets({{400, kFloat}, {400, kFloat}, {400, kFloat}}, 800) == {{2, 1}, {0}}
///
/// Throws shardkit::Error when cap_bytes <= 0 or an item has negative bytes.
std::vector<std::vector<std::size_t>> plan_buckets(const std::vector<BucketItem>& items,
                                                   std::int64_t cap_bytes);

}  // namespace shardkit
