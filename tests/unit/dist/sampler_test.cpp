// The distributed sampler: disjoint across dp ranks, covering, deterministic and resumable.
#include <torch/torch.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "../../../apps/shardkit-train/src/data_loader.hpp"
#include "shardkit/error.hpp"

using shardkit::train::DataLoader;
using shardkit::train::DataPosition;

namespace {
/// A dataset that only has a size: the sampler never looks inside.
class Indices final : public shardkit::Dataset {
 public:
  explicit Indices(std::int64_t n) : n_(n) {}
  std::int64_t size() const override { return n_; }
  shardkit::FeatureShapes features() const override { return {{"i", {1}}}; }
  shardkit::Batch get_batch(const std::vector<std::int64_t>& idx) const override {
    return {{"i", torch::tensor(idx)}};
  }

 private:
  std::int64_t n_;
};
}  // namespace

TEST_CASE("one epoch across dp ranks is disjoint and covers every full global batch") {
  Indices data(103);
  for (int world : {1, 2, 3}) {
    std::vector<std::unique_ptr<DataLoader>> loaders;
    for (int r = 0; r < world; ++r) loaders.push_back(std::make_unique<DataLoader>(data, 4, 11, r, world));
    std::set<std::int64_t> seen;
    const auto batches = loaders[0]->batches_per_epoch();
    CHECK(batches == 103 / (4 * world));
    for (std::int64_t b = 0; b < batches; ++b)
      for (auto& l : loaders) {
        for (auto i : l->peek_indices()) CHECK(seen.insert(i).second);  // disjoint
        l->next();
      }
    CHECK(static_cast<std::int64_t>(seen.size()) == batches * 4 * world);
    // The union of the ranks' slices is the single-process global batch, in order.
    DataLoader single(data, 4 * world, 11, 0, 1);
    single.seek({0, 5 % batches});
    std::vector<std::int64_t> joined;
    for (auto& l : loaders) {
      l->seek({0, 5 % batches});
      auto part = l->peek_indices();
      joined.insert(joined.end(), part.begin(), part.end());
    }
    CHECK(joined == single.peek_indices());
  }
}

TEST_CASE("the order is a pure function of (seed, epoch)") {
  CHECK(DataLoader::permutation(50, 3, 0) == DataLoader::permutation(50, 3, 0));
  CHECK(DataLoader::permutation(50, 3, 0) != DataLoader::permutation(50, 3, 1));
  CHECK(DataLoader::permutation(50, 3, 0) != DataLoader::permutation(50, 4, 0));
  auto p = DataLoader::permutation(50, 3, 2);
  std::sort(p.begin(), p.end());
  for (std::int64_t i = 0; i < 50; ++i) CHECK(p[static_cast<std::size_t>(i)] == i);
}

TEST_CASE("seeking to a saved position continues exactly, across epochs") {
  Indices data(40);
  DataLoader a(data, 4, 9, 1, 2);  // 5 batches per epoch
  for (int i = 0; i < 7; ++i) a.next();
  const DataPosition saved = a.position();
  CHECK(saved.epoch == 1);
  CHECK(saved.batch_in_epoch == 2);
  std::vector<std::vector<std::int64_t>> expected;
  for (int i = 0; i < 6; ++i) {
    expected.push_back(a.peek_indices());
    a.next();
  }
  DataLoader b(data, 4, 9, 1, 2);
  b.seek(saved);
  for (const auto& e : expected) {
    CHECK(b.peek_indices() == e);
    b.next();
  }
  CHECK_THROWS_AS(b.seek({0, 5}), shardkit::FormatError);
}
