// The training loader over a LeRobot dataset: 2 ranks cover each epoch exactly once; resume continues exactly.
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <map>

#include "../../../apps/shardkit-train/src/data_loader.hpp"
#include "lerobot_test_util.hpp"

using namespace shardkit::test;
using shardkit::train::DataLoader;
using shardkit::train::DataPosition;

TEST_CASE("2 ranks' batches cover the dataset exactly once per epoch", "[lerobot][loader]") {
  auto dataset = open_lerobot({{"root", tiny_dataset("video")}, {"episodes", std::string("[0,1]")}});
  REQUIRE(dataset->size() == 65);
  const std::int64_t batch = 4;
  DataLoader rank0(*dataset, batch, 7, 0, 2), rank1(*dataset, batch, 7, 1, 2);
  REQUIRE(rank0.batches_per_epoch() == 65 / 8);
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::map<std::int64_t, int> seen;  // global frame index -> times read
    for (std::int64_t b = 0; b < rank0.batches_per_epoch(); ++b)
      for (auto* loader : {&rank0, &rank1}) {
        const auto indices = loader->next().at("index");
        REQUIRE(indices.size(0) == batch);
        for (std::int64_t k = 0; k < batch; ++k) ++seen[indices[k].item<std::int64_t>()];
      }
    // 8 global batches of 8: 64 of the 65 frames (the incomplete last batch is dropped), each once.
    CHECK(seen.size() == 64);
    for (const auto& [index, times] : seen) {
      INFO("frame " << index << " epoch " << epoch);
      CHECK(times == 1);
      CHECK(index < 65);
    }
  }
}

TEST_CASE("a loader resumed mid-epoch reads the same samples as the uninterrupted one", "[lerobot][loader]") {
  auto dataset = open_lerobot({{"root", tiny_dataset("image")}, {"num_workers", std::int64_t{2}}});
  dataset->set_delta_indices(reference_deltas());
  DataLoader straight(*dataset, 4, 11, 1, 2);
  for (int b = 0; b < 9; ++b) straight.next();  // an epoch is 105 / 8 = 13 global batches
  const DataPosition stop = straight.position();
  DataLoader resumed(*dataset, 4, 11, 1, 2);
  resumed.seek(stop);
  for (int b = 0; b < 6; ++b) {  // crosses into epoch 1
    const auto a = straight.next();
    const auto r = resumed.next();
    for (const auto& [key, tensor] : a) {
      INFO(key << " batch " << b);
      CHECK(at::equal(tensor, r.at(key)));
    }
  }
  CHECK(straight.position().epoch == 1);
}
