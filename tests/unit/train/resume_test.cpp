// Resume continues exactly: the same loss, lr and grad_norm digits as the uninterrupted run.
#include <catch2/catch.hpp>

#include <filesystem>

#include "train_fixture.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

void check_same_tail(const std::vector<MetricsLine>& reference, const std::vector<MetricsLine>& resumed) {
  REQUIRE(resumed.size() == reference.size());
  for (std::size_t i = 0; i < reference.size(); ++i) {
    INFO("step " << reference[i].step);
    CHECK(resumed[i].step == reference[i].step);
    for (const auto* field : {"loss", "lr", "grad_norm", "epoch"})
      CHECK(resumed[i].raw.at(field) == reference[i].raw.at(field));  // bit for bit
  }
}

const std::vector<std::string> kSchedule = {"--scheduler.type=cosine", "--scheduler.num_warmup_steps=5",
                                            "--scheduler.num_decay_steps=60", "--log_freq=5",
                                            "--save_freq=20", "--batch_size=16"};

}  // namespace

TEST_CASE("resume from step k reproduces the uninterrupted run exactly", "[train][resume]") {
  TempDir tmp;
  const auto ref = tmp / "reference", run = tmp / "run";
  auto args = kSchedule;
  args.push_back("--steps=60");
  train_ok(small_run(ref, args));
  train_ok(small_run(run, args));
  // Resume the second run from step 20: its later metrics lines are dropped and rewritten.
  train_ok({"--resume=true",
            "--config_path=" + run + "/checkpoints/000020/pretrained_model/train_config.json"});
  check_same_tail(read_metrics(ref), read_metrics(run));
  CHECK(fs::read_symlink(fs::path(run) / "checkpoints/last") == "000060");
}

TEST_CASE("a resume inside a log window logs the same averages as the uninterrupted run", "[train][resume]") {
  // Saved at step 4 of an 8-step log window: the first line after the resume averages steps
  // 1-8 as the uninterrupted run's does, not only 5-8.
  TempDir tmp;
  const auto ref = tmp / "reference", run = tmp / "run";
  const std::vector<std::string> args = {"--steps=16", "--log_freq=8", "--save_freq=4", "--batch_size=16"};
  train_ok(small_run(ref, args));
  train_ok(small_run(run, args));
  train_ok({"--resume=true",
            "--config_path=" + run + "/checkpoints/000004/pretrained_model/train_config.json"});
  const auto reference = read_metrics(ref);
  REQUIRE(reference.size() == 2);
  check_same_tail(reference, read_metrics(run));
}

TEST_CASE("resume with a larger --steps trains further, exactly as one long run", "[train][resume]") {
  // 256 samples / 16 = 16 batches per epoch: steps 40 -> 60 crosses epoch boundaries.
  TempDir tmp;
  const auto ref = tmp / "reference", run = tmp / "run";
  auto args = kSchedule;
  args.push_back("--steps=60");
  train_ok(small_run(ref, args));
  auto shorter = kSchedule;
  shorter.push_back("--steps=40");
  train_ok(small_run(run, shorter));
  const auto result = train_ok({"--resume=true", "--steps=60", "--output_dir=" + run});
  CHECK(result.output.find("resumed from") != std::string::npos);
  check_same_tail(read_metrics(ref), read_metrics(run));
}

TEST_CASE("--policy.path starts from saved weights", "[train]") {
  TempDir tmp;
  const auto first = tmp / "first", second = tmp / "second", fresh = tmp / "fresh";
  train_ok(small_run(first, {"--steps=200", "--log_freq=200", "--optimizer.lr=3e-3"}));
  // The policy's shape comes from the saved config.json: no --policy.* flags needed.
  train_ok({"--output_dir=" + second, "--dataset.num_samples=256", "--num_threads=1", "--seed=7",
            "--steps=5", "--log_freq=5", "--save_checkpoint=false",
            "--policy.path=" + first + "/checkpoints/last/pretrained_model"});
  train_ok(small_run(fresh, {"--steps=5", "--log_freq=5", "--save_checkpoint=false"}));
  const double trained = read_metrics(first).back().number("loss");
  const double continued = read_metrics(second).back().number("loss");
  const double from_scratch = read_metrics(fresh).back().number("loss");
  INFO("trained " << trained << " continued " << continued << " fresh " << from_scratch);
  CHECK(continued < 0.5 * from_scratch);
}

TEST_CASE("--policy.path that is not a pretrained_model folder is refused", "[train][errors]") {
  TempDir tmp;
  const auto r = run_program("shardkit-train", small_run(tmp / "run", {"--policy.path=" + tmp.path()}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("config.json") != std::string::npos);
}

TEST_CASE("resume with another batch size warns and continues on a batch boundary", "[train][resume]") {
  TempDir tmp;
  const auto run = tmp / "run";
  train_ok(small_run(run, {"--steps=20", "--save_freq=10", "--log_freq=10", "--batch_size=8"}));
  const auto result = train_ok({"--resume=true", "--output_dir=" + run, "--steps=30", "--batch_size=16"});
  CHECK(result.output.find("but the checkpoint was written with batch_size 8 x 1 dp workers") != std::string::npos);
  const auto lines = read_metrics(run);
  REQUIRE(lines.size() == 3);
  CHECK(lines.back().step == 30);
  // 20 steps x 8 samples = 160 seen, then 10 steps x 16 more: epoch (160 + 160) / 256 = 1.25.
  CHECK(lines.back().number("epoch") == Approx(1.25));
}
