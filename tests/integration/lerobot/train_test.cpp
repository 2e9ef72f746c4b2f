// Training on a LeRobot dataset: 2 processes through shardkit-run, the mlp policy on the tiny dataset, loss going down.
#include <catch2/catch.hpp>

#include <numeric>

#include "../distributed/launch.hpp"
#include "lerobot_one_task.hpp"

using namespace shardkit::test;

namespace {

/// A run of the mlp policy (observation.state -> action) on the tiny LeRobot dataset `variant`.
std::vector<std::string> lerobot_run(const std::string& output_dir, const std::string& variant,
                                     std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--output_dir=" + output_dir, "--dataset.type=lerobot",
                                   "--dataset.root=" + tiny_lerobot_dataset(variant), "--policy.type=mlp",
                                   "--policy.hidden_dim=32", "--policy.num_blocks=2", "--batch_size=4",
                                   "--steps=60", "--log_freq=1", "--save_freq=60", "--num_threads=1",
                                   "--seed=7", "--distributed.timeout_s=60"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

double mean_of(const std::vector<double>& v, std::size_t from, std::size_t to) {
  return std::accumulate(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(to),
                         0.0) / static_cast<double>(to - from);
}

}  // namespace

TEST_CASE("2 processes train the mlp policy on the tiny LeRobot dataset and the loss goes down", "[lerobot][train]") {
  for (const std::string variant : {"video", "image"}) {
    DYNAMIC_SECTION(variant) {
      TempDir dir("sk-lerobot-train");
      const auto run = launch(2, lerobot_run(dir / "run", variant));
      INFO(run.output);
      REQUIRE(run.exit_code == 0);
      // Both ranks read the LeRobot dataset (105 frames in 3 episodes), not the synthetic default.
      CHECK(contains(run.output, "dataset lerobot (105 samples)"));
      CHECK(contains(run.output, "Effective batch size: 4 x 2 dp workers x 1 grad accum = 8"));
      // mlp's default mapping: states and actions standardised with meta/stats.json.
      CHECK(contains(run.output, "normalizing with the dataset's statistics: action MEAN_STD, observation.state MEAN_STD"));
      const auto loss = losses(dir / "run");
      REQUIRE(loss.size() == 60);
      for (const auto l : loss) CHECK(std::isfinite(l));
      // action = observation.state rotated by one joint: a linear map the mlp learns quickly.
      const double first = mean_of(loss, 0, 5), last = mean_of(loss, 55, 60);
      INFO("mean loss of steps 1-5: " << first << ", of steps 56-60: " << last);
      CHECK(last < 0.2 * first);
      // 60 steps of 8 samples = 480 samples: past the 4th epoch of 13 global batches.
      const auto metrics = read_metrics(dir / "run");
      CHECK(metrics.back().number("epoch") > 4.0);
      const auto pretrained = dir / "run/checkpoints/000060/pretrained_model/";
      CHECK(std::filesystem::exists(pretrained + "model.safetensors"));
      // LeRobot's processor files beside the weights (their content: tests/unit/lerobot/normalization_test).
      for (const auto* file : {"policy_preprocessor.json", "policy_preprocessor_step_3_normalizer_processor.safetensors",
                               "policy_postprocessor.json", "policy_postprocessor_step_0_unnormalizer_processor.safetensors"})
        CHECK(std::filesystem::exists(pretrained + file));
    }
  }
}

TEST_CASE("a video that breaks during a 2-process run stops every rank with the file named, never hangs",
          "[lerobot][train][bad]") {
  namespace fs = std::filesystem;
  TempDir dir("sk-lerobot-broken");
  const auto root = dir / "video";
  fs::copy(tiny_lerobot_dataset("video"), root, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(root))
    fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
  // The first 60 % of the mp4 decodes: the run starts, and the first batch needing a later frame (read on the
  // loader's prefetch thread of whichever rank gets there first) fails; the other rank must not wait forever.
  const auto video = root + "/videos/observation.images.top/chunk-000/file-000.mp4";
  fs::resize_file(video, fs::file_size(video) * 6 / 10);
  auto args = lerobot_run(dir / "run", "video", {"--dataset.root=" + root, "--steps=200", "--save_checkpoint=false"});
  const auto run = run_command("timeout 120 " + launch_command(2, args));
  INFO(run.output);
  CHECK(run.exit_code != 0);
  CHECK(run.exit_code != 124);  // stopped by itself, not by the timeout
  CHECK(contains(run.output, video));
  CHECK_FALSE(contains(run.output, "training done"));
}

