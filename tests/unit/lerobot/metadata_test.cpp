// Reading a LeRobot dataset's metadata: features and shapes, --dataset.repo_id lookup, --dataset.episodes.
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <cstdlib>

#include "lerobot_test_util.hpp"

using namespace shardkit::test;
using Catch::Matchers::Contains;

TEST_CASE("features come with LeRobot's names and per-frame shapes", "[lerobot]") {
  for (const std::string variant : {"video", "image"}) {
    auto dataset = open_lerobot({{"root", tiny_dataset(variant)}});
    CHECK(dataset->size() == 105);
    const shardkit::FeatureShapes expected = {
        {"observation.state", {6}}, {"action", {6}},     {"observation.images.top", {3, 96, 128}},
        {"timestamp", {}},          {"frame_index", {}}, {"episode_index", {}},
        {"index", {}},              {"task_index", {}}};
    CHECK(dataset->features() == expected);
    // Without delta indices every feature is the current frame's, as LeRobotDataset[i] without
    // delta_timestamps: a batch adds only the batch dimension.
    const auto batch = dataset->get_batch({31, 2});
    CHECK(batch.at("observation.state").sizes() == at::IntArrayRef({2, 6}));
    CHECK(batch.at("observation.images.top").sizes() == at::IntArrayRef({2, 3, 96, 128}));
    CHECK(batch.at("index").sizes() == at::IntArrayRef({2}));
    CHECK(batch.count("action_is_pad") == 0);
    CHECK(batch.at("episode_index")[0].item<std::int64_t>() == 1);
    CHECK(batch.at("frame_index")[0].item<std::int64_t>() == 1);
    CHECK(batch.at("task_index")[0].item<std::int64_t>() == 1);
    CHECK(batch.at("timestamp")[1].item<float>() == 0.2f);
  }
}

TEST_CASE("--dataset.repo_id is looked up under $HF_LEROBOT_HOME, --dataset.root wins", "[lerobot]") {
  TempDir home("sk-lerobot-home");
  std::filesystem::create_directories(home / "local");
  std::filesystem::create_directory_symlink(tiny_dataset("image"), home / "local/tiny");
  ::setenv("HF_LEROBOT_HOME", home.path().c_str(), 1);
  CHECK(open_lerobot({{"repo_id", std::string("local/tiny")}})->size() == 105);
  CHECK(open_lerobot({{"repo_id", std::string("local/tiny")}, {"root", tiny_dataset("video")}})->size() == 105);
  const auto missing = open_error({{"repo_id", std::string("someone/absent")}});
  CHECK_THAT(missing, Contains(home / "someone/absent") && Contains("hf download --repo-type dataset someone/absent"));
  ::unsetenv("HF_LEROBOT_HOME");
  CHECK_THAT(open_error({}), Contains("--dataset.repo_id") && Contains("--dataset.root"));
}

TEST_CASE("--dataset.episodes trains on a subset, with global indices and episode bounds kept", "[lerobot]") {
  auto dataset = open_lerobot({{"root", tiny_dataset("video")}, {"episodes", std::string("[0, 2]")}});
  REQUIRE(dataset->size() == 30 + 40);
  dataset->set_delta_indices(reference_deltas());
  // Row 30 is the first frame of episode 2 (global index 65): its past state is padding.
  const auto batch = dataset->get_batch({29, 30, 69});
  CHECK(batch.at("index")[0].item<std::int64_t>() == 29);
  CHECK(batch.at("index")[1].item<std::int64_t>() == 65);
  CHECK(batch.at("episode_index")[1].item<std::int64_t>() == 2);
  CHECK(batch.at("observation.state_is_pad")[1][0].item<bool>());
  CHECK_FALSE(batch.at("observation.state_is_pad")[1][1].item<bool>());
  CHECK(at::equal(batch.at("observation.state")[1][0], batch.at("observation.state")[1][1]));  // clamped
  // The last frame of episode 0 and of episode 2: 9 of the 10 future actions are padding.
  CHECK(batch.at("action_is_pad")[0].sum().item<std::int64_t>() == 9);
  CHECK(batch.at("action_is_pad")[2].sum().item<std::int64_t>() == 9);
  auto whole = open_lerobot({{"root", tiny_dataset("video")}});
  whole->set_delta_indices(reference_deltas());
  const auto same = whole->get_batch({29, 65, 104});
  for (const auto& [key, tensor] : batch) {
    INFO(key);
    CHECK(at::equal(tensor, same.at(key)));
  }
}
