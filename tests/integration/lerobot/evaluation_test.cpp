// LeRobot main's offline evaluation and episode selection through the launcher: --eval_steps on
// the episodes --dataset.eval_split holds out, --dataset.exclude_episodes, and their errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "../distributed/launch.hpp"
#include "lerobot_one_task.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> lerobot_run(const std::string& output_dir, const std::string& root,
                                     std::vector<std::string> extra) {
  std::vector<std::string> args = {"--output_dir=" + output_dir, "--dataset.type=lerobot", "--dataset.root=" + root,
                                   "--policy.type=mlp",
                                   "--policy.hidden_dim=32", "--policy.num_blocks=2", "--steps=20",
                                   "--log_freq=5", "--save_freq=20", "--num_threads=1", "--seed=7",
                                   "--distributed.timeout_s=60"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("--eval_steps logs eval_loss on the held-out episodes, the same at 1 and 2 processes",
          "[lerobot][eval]") {
  TempDir dir("sk-lerobot-eval");
  const auto root = one_task_copy(dir.path());
  const std::vector<std::string> eval = {"--dataset.eval_split=0.5", "--eval_steps=10", "--env_eval_freq=20000"};
  const auto one = run_program("shardkit-train", lerobot_run(dir / "one", root, with(eval, {"--batch_size=8"})));
  INFO(one.output);
  REQUIRE(one.exit_code == 0);
  // Trained on episode 0 only (30 frames); evaluated on episodes 1 and 2 (35 + 40 frames).
  CHECK(contains(one.output, "Train/eval split: 1 train, 2 eval episodes (eval_split=0.5)"));
  CHECK(contains(one.output, "dataset lerobot (30 samples)"));
  CHECK(contains(one.output, "evaluation every 10 steps on the validation split (75 samples)"));
  CHECK(contains(one.output, "--env_eval_freq=20000 is ignored: shardkit runs no simulation environment"));
  const auto two = launch(2, lerobot_run(dir / "two", root,
                                         with(eval, {"--batch_size=4", "--distributed_backend=ddp",
                                                     "--accelerator.ddp.static_graph=true"})));
  INFO(two.output);
  REQUIRE(two.exit_code == 0);
  CHECK(contains(two.output, "--accelerator.ddp.static_graph=true changes nothing here"));

  // Lines at steps 5, 10, 15, 20; eval_loss at 10 and 20 only (LeRobot: step % eval_steps == 0).
  const auto a = read_metrics(dir / "one");
  const auto b = read_metrics(dir / "two");
  REQUIRE(a.size() == 4);
  REQUIRE(b.size() == 4);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("line " << i << " step " << a[i].step);
    CHECK(a[i].raw.count("eval_loss") == (a[i].step % 10 == 0 ? 1u : 0u));
    if (!a[i].raw.count("eval_loss")) continue;
    const double loss = a[i].number("eval_loss");
    CHECK(std::isfinite(loss));
    CHECK(std::abs(b[i].number("eval_loss") - loss) <= 1e-5 * loss);
  }
}

TEST_CASE("--max_eval_samples and --dataset.exclude_episodes choose what is read", "[lerobot][eval]") {
  TempDir dir("sk-lerobot-episodes");
  const auto root = one_task_copy(dir.path());
  // Held out: episodes 1 and 2 (frames of task_index 1 and 2): 16 // 2 = 8 frames of each.
  const auto capped = run_program("shardkit-train", lerobot_run(dir / "capped", root,
                                                                {"--dataset.eval_split=0.5", "--eval_steps=10",
                                                                 "--max_eval_samples=16", "--batch_size=8"}));
  INFO(capped.output);
  REQUIRE(capped.exit_code == 0);
  CHECK(contains(capped.output, "evaluation every 10 steps on the validation split (16 samples)"));
  const auto excluded = launch(2, lerobot_run(dir / "excluded", tiny_lerobot_dataset(),
                                              {"--dataset.exclude_episodes=[1]", "--batch_size=4"}));
  INFO(excluded.output);
  REQUIRE(excluded.exit_code == 0);
  CHECK(contains(excluded.output, "dataset lerobot (70 samples)"));
}

TEST_CASE("LeRobot's evaluation and episode errors stop the run before training", "[lerobot][eval]") {
  TempDir dir("sk-lerobot-eval-bad");
  const auto no_split = run_program("shardkit-train", lerobot_run(dir / "a", tiny_lerobot_dataset(), {"--eval_steps=10"}));
  CHECK(no_split.exit_code == 2);
  CHECK(contains(no_split.output, "eval_steps > 0 requires dataset.eval_split > 0.0 to hold out eval data"));
  // The tiny dataset has one episode per task: every episode would be held out.
  const auto all_held = run_program("shardkit-train", lerobot_run(dir / "b", tiny_lerobot_dataset(),
                                                                  {"--dataset.eval_split=0.5", "--eval_steps=10"}));
  CHECK(all_held.exit_code == 2);
  CHECK(contains(all_held.output, "--dataset.eval_split=0.5 leaves 0 training episodes from 3 total"));
  const auto duplicate =
      run_program("shardkit-train", lerobot_run(dir / "c", tiny_lerobot_dataset(), {"--dataset.episodes=[0,1,0]"}));
  CHECK(duplicate.exit_code == 2);
  CHECK(contains(duplicate.output, "episode indices contain duplicates: [0]"));
  const auto both = run_program("shardkit-train", lerobot_run(dir / "d", tiny_lerobot_dataset(),
                                                              {"--eval_steps=10", "--eval_freq=10"}));
  CHECK(both.exit_code == 2);
  CHECK(contains(both.output, "give one"));
  for (const std::string d : {"a", "b", "c", "d"}) CHECK_FALSE(fs::exists(dir / (d + "/checkpoints")));
}
