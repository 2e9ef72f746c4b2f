// Which episodes a run reads: --dataset.episodes, --dataset.exclude_episodes and the
// --dataset.eval_split hold-out, with LeRobot main's checks and its split per task.
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <set>

#include "lerobot_one_task.hpp"
#include "lerobot_test_util.hpp"

using namespace shardkit::test;
using Catch::Matchers::Contains;

namespace {

/// The episode index of every sample of the dataset opened with `options`, in sample order.
std::vector<std::int64_t> sample_episodes(const std::map<std::string, shardkit::Value>& options) {
  auto dataset = open_lerobot(options);
  std::vector<std::int64_t> all(static_cast<std::size_t>(dataset->size()));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i);
  const auto column = dataset->get_batch(all).at("episode_index").contiguous();
  return {column.data_ptr<std::int64_t>(), column.data_ptr<std::int64_t>() + column.numel()};
}

/// The distinct episodes among `samples`, in index order.
std::vector<std::int64_t> distinct(const std::vector<std::int64_t>& samples) {
  const std::set<std::int64_t> set(samples.begin(), samples.end());
  return {set.begin(), set.end()};
}

}  // namespace

TEST_CASE("--dataset.exclude_episodes drops episodes on top of --dataset.episodes", "[lerobot][episodes]") {
  const auto root = tiny_dataset("video");
  const auto without_1 = sample_episodes({{"root", root}, {"exclude_episodes", std::string("[1]")}});
  CHECK(without_1.size() == 30 + 40);
  CHECK(distinct(without_1) == std::vector<std::int64_t>{0, 2});
  const auto chosen = sample_episodes(
      {{"root", root}, {"episodes", std::string("[2, 0]")}, {"exclude_episodes", std::string("[0]")}});
  CHECK(chosen.size() == 40);
  CHECK(distinct(chosen) == std::vector<std::int64_t>{2});
  // LeRobot ignores negative or missing indices to exclude (with a warning): nothing is dropped.
  CHECK(sample_episodes({{"root", root}, {"exclude_episodes", std::string("[-1,9,9]")}}).size() == 105);
  CHECK_THAT(open_error({{"root", root}, {"episodes", std::string("[1]")}, {"exclude_episodes", std::string("[1]")}}),
             Contains("selects no episode") && Contains("--dataset.exclude_episodes=[1]"));
}

TEST_CASE("--dataset.episodes refuses negative and duplicate indices as LeRobot does", "[lerobot][episodes]") {
  const auto root = tiny_dataset("video");
  CHECK_THAT(open_error({{"root", root}, {"episodes", std::string("[0,-1]")}}),
             Contains("episode indices must be non-negative, got: [-1]"));
  CHECK_THAT(open_error({{"root", root}, {"episodes", std::string("[2,0,2,0]")}}),
             Contains("episode indices contain duplicates: [0, 2]"));
  CHECK_THAT(open_error({{"root", root}, {"exclude_episodes", std::string("[1,y]")}}),
             Contains("--dataset.exclude_episodes=[1,y]: 'y' is not an episode index"));
}

TEST_CASE("--dataset.eval_split holds out the last episodes of each task", "[lerobot][episodes][eval]") {
  TempDir dir;
  const auto root = one_task_copy(dir.path());
  // One task of 3 episodes: ceil(3 x 0.5) = 2 held out (the last two), 1 trained on.
  const auto train = sample_episodes({{"root", root}, {"eval_split", 0.5}});
  CHECK(distinct(train) == std::vector<std::int64_t>{0});
  const auto eval = sample_episodes({{"root", root}, {"eval_split", 0.5}, {"split", std::string("validation")}});
  CHECK(distinct(eval) == std::vector<std::int64_t>{1, 2});
  CHECK(eval.size() == 35 + 40);
  // ceil(3 x 0.2) = 1: only the last.
  CHECK(distinct(sample_episodes({{"root", root}, {"eval_split", 0.2}, {"split", std::string("validation")}})) ==
        std::vector<std::int64_t>{2});
  // The split comes after the episode selection: of [0, 2], one task, 2 is held out.
  CHECK(distinct(sample_episodes({{"root", root}, {"eval_split", 0.2}, {"exclude_episodes", std::string("[1]")},
                                  {"split", std::string("validation")}})) == std::vector<std::int64_t>{2});
}

TEST_CASE("--max_eval_samples reads the first frames of each task of the held-out episodes",
          "[lerobot][episodes][eval]") {
  TempDir dir;
  const auto root = one_task_copy(dir.path());
  // Held out: episodes 1 and 2, whose frames carry task_index 1 and 2: 10 // 2 = 5 of each.
  auto dataset = open_lerobot(
      {{"root", root}, {"eval_split", 0.5}, {"split", std::string("validation")}, {"max_eval_samples", 10}});
  REQUIRE(dataset->size() == 10);
  const auto batch = dataset->get_batch({0, 4, 5, 9});
  CHECK(batch.at("episode_index").equal(at::tensor({1, 1, 2, 2}, at::kLong)));
  CHECK(batch.at("frame_index").equal(at::tensor({0, 4, 0, 4}, at::kLong)));
  // Fewer than one per task still reads one of each.
  CHECK(open_lerobot({{"root", root}, {"eval_split", 0.5}, {"split", std::string("validation")},
                      {"max_eval_samples", 1}})->size() == 2);
}

TEST_CASE("--dataset.eval_split errors name the fix", "[lerobot][episodes][eval]") {
  const auto root = tiny_dataset("video");
  // Three tasks of one episode each: every episode would be held out.
  CHECK_THAT(open_error({{"root", root}, {"eval_split", 0.5}}),
             Contains("--dataset.eval_split=0.5 leaves 0 training episodes from 3 total"));
  CHECK_THAT(open_error({{"root", root}, {"eval_split", 1.0}}), Contains("eval_split must be in [0.0, 1.0)"));
  CHECK_THAT(open_error({{"root", root}, {"split", std::string("validation")}}),
             Contains("set --dataset.eval_split to a fraction in (0, 1)"));
}
