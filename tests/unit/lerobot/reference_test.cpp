// The tiny datasets' reference tensors (what LeRobot 0.6.1 returns) reproduced exactly, video and image.
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <set>

#include "lerobot_test_util.hpp"
#include "shardkit/safetensors.hpp"
#include "shardkit/safetensors_torch.hpp"

using namespace shardkit::test;
namespace st = shardkit::safetensors;

namespace {

/// Every tensor of the reference for each index "<index>/<key>", compared with our sample.
void require_reference(const std::string& variant) {
  auto dataset = open_lerobot({{"root", tiny_dataset(variant)}});
  dataset->set_delta_indices(reference_deltas());
  const auto file = st::File::open(tiny_reference(variant));
  std::map<std::int64_t, std::set<std::string>> keys;
  for (const auto& name : file.names()) {
    const auto slash = name.find('/');
    keys[std::stoll(name.substr(0, slash))].insert(name.substr(slash + 1));
  }
  REQUIRE(keys.size() == 9);
  std::size_t compared = 0;
  for (const auto& [index, names] : keys) {
    const auto batch = dataset->get_batch({index});
    std::set<std::string> ours;
    for (const auto& [key, value] : batch) ours.insert(key);
    INFO(variant << " index " << index);
    CHECK(ours == names);
    for (const auto& key : names) {
      INFO("feature " << key);
      const auto expected = st::to_tensor(file.get(std::to_string(index) + "/" + key));
      REQUIRE(batch.count(key) == 1);
      const auto got = batch.at(key)[0];
      CHECK(got.scalar_type() == expected.scalar_type());
      REQUIRE(got.sizes() == expected.sizes());
      CHECK(at::equal(got, expected));  // bit for bit: images too, after the /255 scaling
      ++compared;
    }
  }
  CHECK(compared == 9 * 11);
}

}  // namespace

TEST_CASE("the AV1 video dataset gives LeRobot's tensors exactly", "[lerobot][reference]") {
  require_reference("video");
}

TEST_CASE("the PNG image dataset gives LeRobot's tensors exactly", "[lerobot][reference]") {
  require_reference("image");
}

TEST_CASE("a batch of several samples stacks the same tensors, with or without worker threads", "[lerobot]") {
  for (const std::string variant : {"video", "image"}) {
    INFO(variant);
    const std::vector<std::int64_t> indices = {104, 0, 30, 29, 65, 64, 1, 25, 100};
    auto one = open_lerobot({{"root", tiny_dataset(variant)}});
    auto threaded = open_lerobot({{"root", tiny_dataset(variant)}, {"num_workers", std::int64_t{3}}});
    one->set_delta_indices(reference_deltas());
    threaded->set_delta_indices(reference_deltas());
    const auto a = one->get_batch(indices);
    const auto b = threaded->get_batch(indices);
    REQUIRE(a.size() == b.size());
    const auto file = st::File::open(tiny_reference(variant));
    for (const auto& [key, tensor] : a) {
      INFO(key);
      CHECK(tensor.size(0) == static_cast<std::int64_t>(indices.size()));
      CHECK(at::equal(tensor, b.at(key)));
      for (std::size_t k = 0; k < indices.size(); ++k)
        CHECK(at::equal(tensor[static_cast<std::int64_t>(k)],
                        st::to_tensor(file.get(std::to_string(indices[k]) + "/" + key))));
    }
  }
}
