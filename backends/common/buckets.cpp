// Gradient bucket planning: reverse registration order, a byte cap, one dtype per bucket.
#include "shardkit/buckets.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "shardkit/error.hpp"

namespace shardkit {

std::vector<std::vector<std::size_t>> plan_buckets(const std::vector<BucketItem>& items,
                                                   std::int64_t cap_bytes) {
  if (cap_bytes <= 0)
    throw Error("bucket planning: the cap must be positive, got " + std::to_string(cap_bytes) +
                " bytes");
  struct Open {
    std::vector<std::size_t> indices;
    std::int64_t bytes = 0;
  };
  std::vector<std::vector<std::size_t>> buckets;
  std::map<c10::ScalarType, Open> open;
  for (std::size_t i = items.size(); i-- > 0;) {
    const auto& item = items[i];
    if (item.bytes < 0)
      throw Error("bucket planning: parameter " + std::to_string(i) + " has negative size " +
                  std::to_string(item.bytes));
    auto& bucket = open[item.dtype];
    if (!bucket.indices.empty() && bucket.bytes + item.bytes > cap_bytes) {
      buckets.push_back(std::move(bucket.indices));
      bucket = Open{};
    }
    bucket.indices.push_back(i);
    bucket.bytes += item.bytes;
  }
  for (auto& [dtype, bucket] : open)
    if (!bucket.indices.empty()) buckets.push_back(std::move(bucket.indices));
  // A bucket is complete once its lowest index (the last to become ready) is ready.
  std::stable_sort(buckets.begin(), buckets.end(),
                   [](const auto& a, const auto& b) { return a.back() > b.back(); });
  return buckets;
}

}  // namespace shardkit
