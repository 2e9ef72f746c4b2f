// Exact loss normalization: a summed loss trains to the same weights whatever the split into micro-steps and ranks.
#include <catch2/catch.hpp>

#include "../distributed/launch.hpp"
#include "../distributed/weights.hpp"

using namespace shardkit::test;

namespace {

// (batch, accumulation, processes): 16 samples per optimizer step each time, 8 updates.
struct Split {
  const char* name;
  int batch, accum, nproc;
};
const Split kSplits[] = {{"b16_a1_r1", 16, 1, 1}, {"b1_a16_r1", 1, 16, 1}, {"b2_a2_r4", 2, 2, 4}};

std::vector<std::string> args(const std::string& out, const Split& s, const std::string& loss,
                              const std::string& backend) {
  const int steps = 8 * s.accum;
  return {"--output_dir=" + out, "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/policies",
          "--policy.type=wrap_fixture", "--policy.loss=" + loss, "--batch_size=" + std::to_string(s.batch),
          "--accelerator.gradient_accumulation.steps=" + std::to_string(s.accum), "--steps=" + std::to_string(steps),
          "--save_freq=" + std::to_string(steps), "--optimizer.lr=0.01", "--num_threads=1", "--seed=7",
          "--log_freq=1", "--dataset.num_samples=256", "--distributed.timeout_s=60",
          "--distributed_backend=" + std::string(s.nproc == 1 ? "single" : backend)};
}

void train(const std::string& out, const Split& s, const std::string& loss, const std::string& backend = "ddp") {
  const auto a = args(out, s, loss, backend);
  const auto r = s.nproc == 1 ? run_program("shardkit-train", a) : launch(s.nproc, a);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
}

}  // namespace

TEST_CASE("a summed loss gives the same weights for (16,1,1), (1,16,1) and (2,2,4 ranks) under ddp and fsdp") {
  TempDir dir("sk-loss-norm");
  for (const auto& s : kSplits) train(dir / s.name, s, "summed");
  train(dir / "fsdp_b2_a2_r4", kSplits[2], "summed", "fsdp");
  for (const auto* other : {"b1_a16_r1", "b2_a2_r4", "fsdp_b2_a2_r4"}) {
    const auto d = weight_difference(dir / other, dir / "b16_a1_r1");
    INFO(other << ": worst relative weight difference " << d);
    CHECK(d <= 1e-6);
  }
  // The logged loss is the step's global mean, logged once per optimizer step: the same lines
  // at every split (never a micro-step's 0 or twice the mean).
  const auto a = read_metrics(dir / "b16_a1_r1");
  const auto c = read_metrics(dir / "b2_a2_r4");
  REQUIRE(a.size() == 8);
  REQUIRE(c.size() == 8);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(c[i].step == 2 * a[i].step);
    CHECK(c[i].number("loss") == Approx(a[i].number("loss")).epsilon(1e-5));
  }
}

TEST_CASE("averaging per micro-batch instead (the old gradient-accumulation bug) changes the weights") {
  TempDir dir("sk-loss-mean");
  train(dir / "a", kSplits[0], "masked_mean");
  train(dir / "b", kSplits[1], "masked_mean");
  const auto d = weight_difference(dir / "b", dir / "a");
  INFO("worst relative weight difference " << d);
  CHECK(d > 1e-4);  // what the test above would catch
}
