// The run folder and the optimizer's options, the parts of a run's set-up that need no plugin:
// the default folder name, paths made absolute for resume, the refusal of a folder holding a run,
// the start after a launcher restart, and the policy's optimizer preset against given options.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "../../../apps/shardkit-train/src/optimizer_setup.hpp"
#include "../../../apps/shardkit-train/src/run_folder.hpp"
#include "../../../apps/shardkit-train/src/scheduler.hpp"
#include "../../../apps/shardkit-train/src/train_options.hpp"
#include "shardkit/config_resolution.hpp"
#include "shardkit/error.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using shardkit::Config;
using shardkit::test::contains;
using shardkit::test::TempDir;
using shardkit::train::Provenance;

namespace {

/// Runs `body` with the working directory set to `dir`, then restores it.
template <class Body>
void in_directory(const std::string& dir, Body body) {
  const auto before = fs::current_path();
  fs::current_path(dir);
  try {
    body();
  } catch (...) {
    fs::current_path(before);
    throw;
  }
  fs::current_path(before);
}

/// Every shardkit-train option at its default, then the values the cases below expect.
Config optimizer_values() {
  shardkit::Schema schema;
  schema.add("", shardkit::train::core_options().data(), shardkit::train::core_options().size(), "core");
  auto config = shardkit::resolve_all(schema, {}, {}).config;
  config.set("optimizer.lr", 1e-3);
  config.set("optimizer.beta1", 0.9);
  config.set("optimizer.beta2", 0.999);
  config.set("optimizer.eps", 1e-8);
  config.set("optimizer.weight_decay", 1e-2);
  config.set("scheduler.type", std::string("cosine"));
  config.set("scheduler.num_warmup_steps", std::int64_t{10});
  config.set("scheduler.num_decay_steps", std::int64_t{0});
  config.set("scheduler.decay_lr", 1e-5);
  return config;
}

}  // namespace

TEST_CASE("the default output folder is LeRobot's, named after the local time and the job", "[train][run_folder]") {
  std::tm when{};
  when.tm_year = 2026 - 1900;
  when.tm_mon = 11;
  when.tm_mday = 6;
  when.tm_hour = 9;
  when.tm_min = 5;
  when.tm_sec = 7;
  when.tm_isdst = -1;
  CHECK(shardkit::train::default_output_dir("act_aloha", std::mktime(&when)) ==
        "outputs/train/2026-12-06/09-05-07_act_aloha");
}

TEST_CASE("paths a resume reads again are stored absolute, with a note; others stay as given", "[train][run_folder]") {
  TempDir tmp;
  fs::create_directories(tmp / "models/base");
  std::ofstream(tmp / "adapter.safetensors") << "x";
  Config config;
  config.set("policy.path", std::string("models/base/"));
  config.set("peft.adapter_path", std::string("adapter.safetensors"));
  config.set("dataset.path", std::string("missing.jsonl"));
  config.set("dataset.root", std::string("/already/absolute"));
  config.set("output_dir", std::string("models"));  // not a path a resume reads
  Provenance provenance;
  in_directory(tmp.path(), [&] { shardkit::train::make_paths_absolute(config, provenance); });
  const auto root = fs::canonical(tmp.path()).string();
  CHECK(fs::path(config.get_string("policy.path")) == fs::weakly_canonical(root + "/models/base"));
  CHECK(fs::path(config.get_string("peft.adapter_path")) == fs::weakly_canonical(root + "/adapter.safetensors"));
  CHECK(config.get_string("dataset.path") == "missing.jsonl");
  CHECK(config.get_string("dataset.root") == "/already/absolute");
  CHECK(config.get_string("output_dir") == "models");
  REQUIRE(provenance.find("policy.path") != nullptr);
  CHECK(provenance.find("policy.path")->note == "stored absolute; given as models/base/");
  CHECK(provenance.find("dataset.path") == nullptr);
}

TEST_CASE("a folder that holds a run, or a file, is refused for a new run; an empty one is not", "[train][run_folder]") {
  TempDir tmp;
  using shardkit::train::output_dir_problem;
  CHECK(output_dir_problem(tmp / "new") == "");
  fs::create_directories(tmp / "empty");
  CHECK(output_dir_problem(tmp / "empty") == "");
  std::ofstream(tmp / "file") << "x";
  CHECK(output_dir_problem(tmp / "file") == "--output_dir=" + tmp / "file" + " exists and is not a folder");
  fs::create_directories(tmp / "trained/checkpoints");
  CHECK(contains(output_dir_problem(tmp / "trained"), "already holds a run; pass --resume=true to continue it"));
  fs::create_directories(tmp / "logged");
  std::ofstream(tmp / "logged/metrics.jsonl") << "{}\n";
  CHECK(contains(output_dir_problem(tmp / "logged"), "(nothing was overwritten)"));
}

TEST_CASE("a restarted run continues from the newest checkpoint, or starts afresh in its folder", "[train][run_folder]") {
  TempDir tmp;
  auto world = shardkit::make_local_group("world");
  using shardkit::train::agree_on_start;
  const auto run = tmp / "run";
  fs::create_directories(run);
  std::ofstream(run + "/metrics.jsonl") << "{}\n";  // the failed attempt logged, saved nothing

  SECTION("no checkpoint yet: a fresh start in the same folder, which is not refused") {
    std::string resume_dir;
    CHECK(agree_on_start(*world, run, 1, resume_dir));
    CHECK(resume_dir.empty());
  }
  SECTION("the newest checkpoint of the folder") {
    for (const auto* step : {"000010", "000020"})
      fs::create_directories(run + "/checkpoints/" + step + "/pretrained_model");
    std::string resume_dir;
    CHECK_FALSE(agree_on_start(*world, run, 2, resume_dir));
    CHECK(resume_dir == fs::canonical(run + "/checkpoints/000020").string());
  }
  SECTION("a first start in a folder holding a run is refused") {
    std::string resume_dir;
    CHECK_THROWS_AS(agree_on_start(*world, run, 0, resume_dir), shardkit::ConfigError);
  }
  SECTION("--resume names the checkpoint: nothing is decided") {
    std::string resume_dir = "/somewhere/000005";
    CHECK_FALSE(agree_on_start(*world, run, 3, resume_dir));
    CHECK(resume_dir == "/somewhere/000005");
  }
}

TEST_CASE("a policy's optimizer preset fills what the run did not give, and stays for a resume", "[train][optimizer_setup]") {
  shardkit::OptimizerPreset preset;
  preset.lr = 1e-5;
  preset.weight_decay = 1e-4;
  preset.groups = {{"model.backbone.", 2e-6}};
  std::string notes;

  SECTION("nothing given: the preset's values, written back into the configuration") {
    auto config = optimizer_values();
    const auto adam = shardkit::train::adamw_options(config, Provenance{}, &preset, notes);
    CHECK(adam.lr == 1e-5);
    CHECK(adam.weight_decay == 1e-4);
    CHECK(adam.beta2 == 0.999);
    REQUIRE(adam.lr_factors.size() == 1);
    CHECK(adam.lr_factors[0].first == "model.backbone.");
    CHECK(adam.lr_factors[0].second == Approx(0.2));
    CHECK(config.get_float("optimizer.lr") == 1e-5);
    CHECK(config.get_float("optimizer.weight_decay") == 1e-4);
    CHECK(notes == "lr 1e-05, weight_decay 0.0001, lr 2e-06 for model.backbone.*");
  }
  SECTION("a given --optimizer.lr wins over the preset's; its groups scale from it") {
    auto config = optimizer_values();
    Provenance provenance;
    provenance.set("optimizer.lr", "--optimizer.lr");
    provenance.set("optimizer.weight_decay", "default");
    const auto adam = shardkit::train::adamw_options(config, provenance, &preset, notes);
    CHECK(adam.lr == 1e-3);
    CHECK(adam.weight_decay == 1e-4);
    CHECK(adam.lr_factors[0].second == Approx(2e-3));
    CHECK(notes == "weight_decay 0.0001, lr 2e-06 for model.backbone.*");
  }
  SECTION("no preset: the run's values, no notes") {
    auto config = optimizer_values();
    const auto adam = shardkit::train::adamw_options(config, Provenance{}, nullptr, notes);
    CHECK(adam.lr == 1e-3);
    CHECK(adam.lr_factors.empty());
    CHECK(notes.empty());
  }
}

TEST_CASE("the scheduler decays over the whole run unless told otherwise", "[train][optimizer_setup]") {
  auto config = optimizer_values();
  auto sched = shardkit::train::scheduler_options(config, 500, 3e-4);
  CHECK(sched.type == "cosine");
  CHECK(sched.warmup_steps == 10);
  CHECK(sched.decay_steps == 500);
  CHECK(sched.peak_lr == 3e-4);
  CHECK(sched.decay_lr == 1e-5);
  config.set("scheduler.num_decay_steps", std::int64_t{200});
  CHECK(shardkit::train::scheduler_options(config, 500, 3e-4).decay_steps == 200);
}

TEST_CASE("--scheduler.warmup_ratio is the warmup as a fraction of the run's steps, rounded up, as transformers",
          "[train][optimizer_setup]") {
  auto config = optimizer_values();
  config.set("scheduler.num_warmup_steps", std::int64_t{0});
  config.set("scheduler.warmup_ratio", 0.1);
  // transformers 5.25's TrainingArguments(warmup_steps=0.1).get_warmup_steps(n): 3 for 25, 1 for 10 and 7.
  CHECK(shardkit::train::scheduler_options(config, 25, 3e-4).warmup_steps == 3);
  CHECK(shardkit::train::scheduler_options(config, 10, 3e-4).warmup_steps == 1);
  CHECK(shardkit::train::scheduler_options(config, 7, 3e-4).warmup_steps == 1);
  // With accumulation the ratio is of optimizer updates: 100 loop steps of 4 are 25 updates, 3 of
  // them warmup (12 loop steps), and the schedule counts updates.
  config.set("accelerator.gradient_accumulation.steps", std::int64_t{4});
  config.set("scheduler.type", std::string("linear"));
  const auto accumulated = shardkit::train::scheduler_options(config, 100, 2.0);
  CHECK(accumulated.warmup_steps == 12);
  const shardkit::Scheduler linear(accumulated);
  CHECK(linear.lr(3) == 0.0);                        // the first update
  CHECK(linear.lr(7) == Approx(2.0 / 3.0));          // the second
  CHECK(linear.lr(15) == Approx(2.0 * 22 / 22));     // the fourth: the peak
  CHECK(linear.lr(19) == Approx(1.9090909090909092));
  CHECK(linear.lr(99) == Approx(0.09090909090909091));  // the 25th and last
  config.set("accelerator.gradient_accumulation.steps", std::int64_t{1});
  config.set("scheduler.num_warmup_steps", std::int64_t{4});
  CHECK_THROWS_WITH(shardkit::train::scheduler_options(config, 25, 3e-4),
                    Catch::Contains("--scheduler.num_warmup_steps=4 and --scheduler.warmup_ratio=0.1 both set"));
}
