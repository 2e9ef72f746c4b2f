// Single-process training end to end: learning, gradient accumulation, checkpoint layout.
#include <catch2/catch.hpp>

#include <filesystem>

#include "train_fixture.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

TEST_CASE("loss on the synthetic task falls below 25% of its start", "[train]") {
  TempDir tmp;
  const auto out = tmp / "run";
  train_ok(small_run(out, {"--steps=300", "--log_freq=10", "--save_checkpoint=false",
                           "--optimizer.lr=3e-3"}));
  const auto lines = read_metrics(out);
  REQUIRE(lines.size() == 30);
  const double first = lines.front().number("loss");
  const double last = lines.back().number("loss");
  INFO("first " << first << " last " << last);
  CHECK(last < 0.25 * first);
  for (const auto& field : {"step", "loss", "lr", "grad_norm", "samples_per_s"})
    CHECK(lines.back().raw.count(field) == 1);
}

TEST_CASE("batch 4 x 2 accumulation steps matches batch 8 with a constant LR, logged at updates", "[train]") {
  // Same samples per update (the sampler's global order is the same), mean losses, so
  // the updates agree up to float32 summation order. Tolerance: 1e-5 relative.
  TempDir tmp;
  const auto a = tmp / "b8", b = tmp / "b4x2";
  train_ok(small_run(a, {"--steps=40", "--batch_size=8", "--log_freq=1", "--save_checkpoint=false"}));
  // --log_freq=1 with accumulation: one line per optimizer update, averaging its micro-batches
  // (never a micro-step's partial loss).
  train_ok(small_run(b, {"--steps=80", "--batch_size=4", "--log_freq=1", "--save_checkpoint=false",
                         "--accelerator.gradient_accumulation.steps=2"}));
  const auto la = read_metrics(a), lb = read_metrics(b);
  REQUIRE(la.size() == 40);
  REQUIRE(lb.size() == 40);
  for (std::size_t i = 0; i < la.size(); ++i) {
    INFO("update " << i + 1);
    CHECK(lb[i].step == 2 * la[i].step);
    CHECK(lb[i].number("loss") == Approx(la[i].number("loss")).epsilon(1e-5));
    CHECK(lb[i].number("grad_norm") == Approx(la[i].number("grad_norm")).epsilon(1e-4));
  }
}

TEST_CASE("checkpoints follow the LeRobot layout", "[train][checkpoint]") {
  TempDir tmp;
  const auto out = tmp / "run";
  train_ok(small_run(out, {"--steps=30", "--save_freq=10", "--log_freq=10"}));
  const fs::path ck = fs::path(out) / "checkpoints";
  for (const auto* step : {"000010", "000020", "000030"}) {
    INFO(step);
    for (const auto* f : {"pretrained_model/config.json", "pretrained_model/train_config.json",
                          "pretrained_model/model.safetensors", "training_state/training_step.json",
                          "training_state/rng_state.safetensors", "training_state/scheduler_state.json",
                          "training_state/optimizer_state.safetensors",
                          "training_state/optimizer_param_groups.json"})
      CHECK(fs::is_regular_file(ck / step / f));
  }
  REQUIRE(fs::is_symlink(ck / "last"));
  CHECK(fs::read_symlink(ck / "last") == "000030");  // relative link
  const auto step_json = slurp((ck / "000020/training_state/training_step.json").string());
  CHECK(step_json.find("\"step\": 20") != std::string::npos);
  CHECK(step_json.find("\"dp_replicate\": 1") != std::string::npos);
  const auto config = slurp((ck / "000030/pretrained_model/config.json").string());
  CHECK(config.find("\"hidden_dim\": 32") != std::string::npos);
  // No temporary folders are left behind.
  for (const auto& e : fs::directory_iterator(ck))
    CHECK(e.path().filename().string().rfind(".tmp", 0) != 0);
}
