// LeRobot's image augmentation through the training loader: off = today's batches, on = reproducible, resumable, in [0, 1].
#include <ATen/ATen.h>

#undef CHECK
#include <catch2/catch.hpp>

#include "../../../apps/shardkit-train/src/data_loader.hpp"
#include "../lerobot/lerobot_test_util.hpp"
#include "shardkit/augmentation.hpp"
#include "shardkit/capability.hpp"

using namespace shardkit::test;
using shardkit::train::DataLoader;
using shardkit::train::DataPosition;

namespace {

/// The dataset's augmentation capability, which every LeRobot dataset offers.
const shardkit::AugmentedDataset& augmentation_of(const shardkit::Dataset& dataset) {
  const auto* augmented = shardkit::capability<shardkit::AugmentedDataset>(dataset);
  REQUIRE(augmented != nullptr);
  return *augmented;
}

const std::string kCamera = "observation.images.top";

std::shared_ptr<shardkit::Dataset> open(const std::string& variant, bool enable, std::int64_t workers = 0) {
  auto dataset = open_lerobot({{"root", tiny_dataset(variant)},
                               {"num_workers", workers},
                               {"image_transforms.enable", enable}});
  dataset->set_delta_indices(reference_deltas());
  return dataset;
}

void check_same(const shardkit::Batch& a, const shardkit::Batch& b, const std::string& what) {
  REQUIRE(a.size() == b.size());
  for (const auto& [key, tensor] : a) {
    INFO(what << ": " << key);
    CHECK(at::equal(tensor, b.at(key)));
  }
}

}  // namespace

TEST_CASE("augmentation off: the loader's batches are the dataset's plain batches, bit for bit", "[image_transforms]") {
  for (const std::string variant : {"video", "image"}) {
    auto plain = open(variant, false);
    CHECK_FALSE(augmentation_of(*plain).augments());
    DataLoader loader(*plain, 4, 5, 0, 2);
    for (int b = 0; b < 3; ++b) {
      const auto indices = loader.peek_indices();
      check_same(loader.next(), plain->get_batch(indices), variant + " batch " + std::to_string(b));
    }
    // With augmentation on, get_batch itself stays the plain reading.
    auto augmenting = open(variant, true);
    check_same(augmenting->get_batch({0, 7, 33}), plain->get_batch({0, 7, 33}), variant + " get_batch");
  }
}

TEST_CASE("augmentation on: cameras change, stay in [0, 1], everything else is untouched", "[image_transforms]") {
  for (const std::string variant : {"video", "image"}) {
    auto plain = open(variant, false);
    auto augmenting = open(variant, true);
    DataLoader a(*augmenting, 8, 5, 0, 1), p(*plain, 8, 5, 0, 1);
    for (int b = 0; b < 3; ++b) {
      const auto augmented = a.next();
      const auto original = p.next();
      for (const auto& [key, tensor] : original) {
        INFO(variant << " " << key << " batch " << b);
        const auto& other = augmented.at(key);
        REQUIRE(other.sizes() == tensor.sizes());
        REQUIRE(other.scalar_type() == tensor.scalar_type());
        if (key != kCamera) {
          CHECK(at::equal(other, tensor));
          continue;
        }
        CHECK(other.min().item<float>() >= 0.0f);
        CHECK(other.max().item<float>() <= 1.0f);
        // Every sample's image is changed (3 of 6 transforms, none an identity at these ranges).
        for (std::int64_t k = 0; k < other.size(0); ++k) CHECK_FALSE(at::equal(other[k], tensor[k]));
        CHECK((other - tensor).abs().mean().item<float>() > 1e-3f);
      }
    }
  }
}

TEST_CASE("augmentation is a pure function of (seed, epoch, sample): same runs, resumes, threads; new epochs differ",
          "[image_transforms]") {
  auto one = open("image", true, 0);
  auto threaded = open("image", true, 2);
  DataLoader straight(*one, 4, 11, 1, 2), again(*threaded, 4, 11, 1, 2);
  for (int b = 0; b < 9; ++b) check_same(straight.next(), again.next(), "second run, batch " + std::to_string(b));
  const DataPosition stop = straight.position();
  DataLoader resumed(*one, 4, 11, 1, 2);
  resumed.seek(stop);
  for (int b = 0; b < 6; ++b)  // crosses into epoch 1 (13 global batches an epoch)
    check_same(straight.next(), resumed.next(), "resumed, batch " + std::to_string(b));
  CHECK(straight.position().epoch == 1);

  // The same samples in another epoch, or under another run seed, get other augmentations.
  const auto& augmented = augmentation_of(*one);
  const std::vector<std::int64_t> indices = {3, 40, 77};
  const auto epoch0 = augmented.get_augmented_batch(indices, shardkit::augmentation_seed(11, 0)).at(kCamera);
  const auto epoch1 = augmented.get_augmented_batch(indices, shardkit::augmentation_seed(11, 1)).at(kCamera);
  const auto seed12 = augmented.get_augmented_batch(indices, shardkit::augmentation_seed(12, 0)).at(kCamera);
  for (std::int64_t k = 0; k < 3; ++k) {
    CHECK_FALSE(at::equal(epoch0[k], epoch1[k]));
    CHECK_FALSE(at::equal(epoch0[k], seed12[k]));
  }
  // A sample's augmentation does not depend on the batch it is read in.
  const auto alone = augmented.get_augmented_batch({40}, shardkit::augmentation_seed(11, 0)).at(kCamera);
  CHECK(at::equal(alone[0], epoch0[1]));
}

TEST_CASE("bad --dataset.image_transforms.* values are refused naming the flag", "[image_transforms]") {
  const auto error = [](const std::string& key, const shardkit::Value& value) {
    return open_error({{"root", tiny_dataset("image")}, {"image_transforms.enable", true}, {key, value}});
  };
  CHECK_THAT(error("image_transforms.hue", std::string("-0.7,0.1")),
             Catch::Contains("--dataset.image_transforms.hue=-0.7,0.1") && Catch::Contains("lo >= -0.5"));
  CHECK_THAT(error("image_transforms.brightness", std::string("1.2")),
             Catch::Contains("--dataset.image_transforms.brightness=1.2") && Catch::Contains("lo,hi"));
  CHECK_THAT(error("image_transforms.contrast", std::string("1.2,0.8")),
             Catch::Contains("--dataset.image_transforms.contrast=1.2,0.8") && Catch::Contains("lo <= hi"));
  CHECK_THAT(error("image_transforms.affine_translate", std::string("0.05,2")),
             Catch::Contains("--dataset.image_transforms.affine_translate"));
  CHECK_THAT(error("image_transforms.max_num_transforms", std::int64_t{0}),
             Catch::Contains("--dataset.image_transforms.max_num_transforms=0"));
  auto none = open_lerobot({{"root", tiny_dataset("image")}});
  CHECK_FALSE(augmentation_of(*none).augments());
}
