// Bucket planning: reverse order, the byte cap, oversized parameters, one dtype per bucket.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include <shardkit/buckets.hpp>
#include <shardkit/error.hpp>

using shardkit::BucketItem;
using shardkit::plan_buckets;
using Plan = std::vector<std::vector<std::size_t>>;

namespace {

std::vector<BucketItem> floats(const std::vector<std::int64_t>& bytes) {
  std::vector<BucketItem> items;
  for (auto b : bytes) items.push_back({b, c10::kFloat});
  return items;
}

}  // namespace

TEST_CASE("buckets fill in reverse registration order up to the cap", "[ddp][buckets]") {
  CHECK(plan_buckets(floats({400, 400, 400}), 800) == Plan{{2, 1}, {0}});
  // Reaching the cap exactly is allowed; exceeding it is not.
  CHECK(plan_buckets(floats({400, 400}), 800) == Plan{{1, 0}});
  CHECK(plan_buckets(floats({400, 401}), 800) == Plan{{1}, {0}});
  CHECK(plan_buckets(floats({100, 100, 100, 100}), 1 << 20) == Plan{{3, 2, 1, 0}});
  CHECK(plan_buckets({}, 100).empty());
}

TEST_CASE("a parameter larger than the cap gets a bucket of its own", "[ddp][buckets]") {
  CHECK(plan_buckets(floats({100, 5000, 100, 100}), 1000) == Plan{{3, 2}, {1}, {0}});
  CHECK(plan_buckets(floats({5000}), 1000) == Plan{{0}});
}

TEST_CASE("a bucket never mixes dtypes and buckets come in completion order", "[ddp][buckets]") {
  const std::vector<BucketItem> items = {
      {400, c10::kFloat}, {200, c10::kHalf}, {400, c10::kFloat}, {200, c10::kHalf}};
  // The half bucket {3, 1} completes when parameter 1 is ready, before the float one.
  CHECK(plan_buckets(items, 800) == Plan{{3, 1}, {2, 0}});
  // {3, 1} completes after {2} but before {0}.
  CHECK(plan_buckets(items, 400) == Plan{{2}, {3, 1}, {0}});
  CHECK(plan_buckets(items, 399) == Plan{{3}, {2}, {1}, {0}});
}

TEST_CASE("planning refuses a non-positive cap or a negative size", "[ddp][buckets]") {
  CHECK_THROWS_AS(plan_buckets(floats({4}), 0), shardkit::Error);
  CHECK_THROWS_AS(plan_buckets(floats({4}), -5), shardkit::Error);
  CHECK_THROWS_AS(plan_buckets(floats({4, -1}), 10), shardkit::Error);
}

TEST_CASE("random plans cover each parameter once and respect cap and dtype", "[ddp][buckets]") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<BucketItem> items(rng() % 30);
    for (auto& item : items) {
      item.bytes = static_cast<std::int64_t>(rng() % 3000);
      item.dtype = rng() % 3 == 0 ? c10::kHalf : c10::kFloat;
    }
    const std::int64_t cap = 1 + static_cast<std::int64_t>(rng() % 4000);
    const auto plan = plan_buckets(items, cap);
    std::vector<int> seen(items.size(), 0);
    std::size_t previous_last = items.size();
    for (const auto& bucket : plan) {
      REQUIRE(!bucket.empty());
      std::int64_t bytes = 0;
      for (std::size_t k = 0; k < bucket.size(); ++k) {
        ++seen[bucket[k]];
        bytes += items[bucket[k]].bytes;
        CHECK(items[bucket[k]].dtype == items[bucket[0]].dtype);
        if (k > 0) CHECK(bucket[k] < bucket[k - 1]);
      }
      CHECK((bytes <= cap || bucket.size() == 1));
      CHECK(bucket.back() < previous_last);
      previous_last = bucket.back();
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  }
}
