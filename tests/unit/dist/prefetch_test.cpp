// The loader's prefetching: the same batches in the same order as reading on demand, errors where they belong, seek.
#include <torch/torch.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "../../../apps/shardkit-train/src/data_loader.hpp"
#include "shardkit/error.hpp"

using shardkit::train::DataLoader;
using shardkit::train::DataPosition;
using shardkit::train::LoaderOptions;

namespace {
/// Sample i is the value i; reading index `bad` throws; counts the batches read and on which thread.
class Counting final : public shardkit::Dataset {
 public:
  Counting(std::int64_t n, std::int64_t bad = -1) : n_(n), bad_(bad) {}
  std::int64_t size() const override { return n_; }
  shardkit::FeatureShapes features() const override { return {{"i", {}}}; }
  shardkit::Batch get_batch(const std::vector<std::int64_t>& idx) const override {
    ++reads;
    if (std::this_thread::get_id() != main_thread) ++off_main;
    for (const auto i : idx)
      if (i == bad_) throw shardkit::RuntimeError("sample " + std::to_string(i) + " is unreadable");
    return {{"i", torch::tensor(idx)}};
  }
  mutable std::atomic<int> reads{0}, off_main{0};
  std::thread::id main_thread = std::this_thread::get_id();

 private:
  std::int64_t n_, bad_;
};

LoaderOptions prefetching(std::int64_t depth) {
  LoaderOptions o;
  o.prefetch = depth;
  o.transform = [](shardkit::Batch& b) { b["twice"] = b.at("i") * 2; };
  return o;
}
}  // namespace

TEST_CASE("a prefetching loader returns the batches of the on-demand one, read on another thread", "[loader]") {
  Counting data(50), ahead_data(50);
  DataLoader plain(data, 4, 3, 1, 2, prefetching(0));
  DataLoader ahead(ahead_data, 4, 3, 1, 2, prefetching(2));
  for (int b = 0; b < 20; ++b) {  // 6 batches per epoch: crosses three epochs
    INFO("batch " << b);
    const auto x = plain.next(), y = ahead.next();
    CHECK(torch::equal(x.at("i"), y.at("i")));
    CHECK(torch::equal(y.at("twice"), y.at("i") * 2));  // the transform ran
    CHECK(plain.position().epoch == ahead.position().epoch);
    CHECK(plain.position().batch_in_epoch == ahead.position().batch_in_epoch);
  }
  CHECK(data.off_main.load() == 0);
  CHECK(ahead_data.off_main.load() == ahead_data.reads.load());
  CHECK(ahead_data.reads.load() <= 20 + 2 + 1);  // never more than `prefetch` (+ the one in flight) ahead
}

TEST_CASE("seek drops what was read ahead and continues from the new position", "[loader]") {
  Counting data(50);
  DataLoader a(data, 4, 9, 0, 2, prefetching(2)), b(data, 4, 9, 0, 2, prefetching(0));
  for (int i = 0; i < 3; ++i) a.next();
  const DataPosition to{4, 2};
  a.seek(to);
  b.seek(to);
  for (int i = 0; i < 8; ++i) CHECK(torch::equal(a.next().at("i"), b.next().at("i")));
}

TEST_CASE("a batch that fails to read is thrown by the next() that would return it, not earlier", "[loader]") {
  const auto order = DataLoader::permutation(40, 5, 0);
  // The sample that rank 0 reads first in its 3rd batch (batch size 2, 1 rank).
  Counting data(40, order[4]);
  DataLoader loader(data, 2, 5, 0, 1, prefetching(3));
  CHECK_NOTHROW(loader.next());
  CHECK_NOTHROW(loader.next());
  CHECK_THROWS_WITH(loader.next(), Catch::Contains("sample " + std::to_string(order[4]) + " is unreadable"));
  CHECK(loader.position().batch_in_epoch == 2);  // the failed batch was not consumed
}
