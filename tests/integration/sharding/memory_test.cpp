// Per-rank peak of CPU tensor memory while training: fsdp and zero3 at 2 ranks against ddp, zero 1 and 2 against DeepSpeed's formulas.
#include <regex>

#include "sharded_runs.hpp"

using namespace shardkit::test;

namespace {

// Every rank's "peak CPU tensor memory while training: ... (N bytes) on rank R".
std::vector<double> peaks(const std::string& output) {
  std::vector<double> out;
  const std::regex line(R"(peak CPU tensor memory while training: [^(]*\((\d+) bytes\) on rank (\d+))");
  for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it)
    out.push_back(std::stod((*it)[1]));
  return out;
}

// A model whose parameters dominate: 8 blocks of 256 x 512 x 256 (2.1 M parameters, 8.4 MB in
// fp32, one block 1.05 MB), batch 2, so activations are a few KB.
const std::vector<std::string> kModel = {"--policy.hidden_dim=256", "--policy.num_blocks=8", "--policy.expansion=2",
                                         "--batch_size=2", "--steps=4", "--save_checkpoint=false",
                                         "--log_all_ranks=true"};

}  // namespace

TEST_CASE("fsdp and zero3 at 2 ranks peak at most half of ddp's tensor memory plus one unit") {
  TempDir dir("sk-shard-mem");
  const auto ddp_out = launch_ok(2, dir / "ddp", kModel, {"--distributed_backend=ddp"});
  const auto fsdp_out = launch_ok(2, dir / "fsdp", kModel, {"--distributed_backend=fsdp"});
  const auto ddp = peaks(ddp_out);
  const auto fsdp = peaks(fsdp_out);
  const auto zero3 = peaks(launch_ok(2, dir / "zero3", kModel, {"--distributed_backend=zero"}));
  REQUIRE(ddp.size() == 2);
  REQUIRE(fsdp.size() == 2);
  REQUIRE(zero3.size() == 2);
  // ddp holds parameters, gradients, AdamW's two moments and its gradient buckets whole on
  // every rank: about 5 x 8.4 MB. The sharded backends hold half of the first four, plus the
  // gathered units, their whole gradients during backward and the reduce buffers.
  const double unit = 1.05e6 * 4;  // bound for one gathered unit with its gradient and buffers
  const double ddp_peak = std::max(ddp[0], ddp[1]);
  INFO("ddp " << ddp_peak << " bytes, fsdp " << fsdp[0] << "/" << fsdp[1] << ", zero3 " << zero3[0] << "/" << zero3[1]);
  CHECK(ddp_peak > 4 * 8.4e6);  // the measure sees the whole model state
  for (const double p : fsdp) CHECK(p <= ddp_peak / 2 + unit);
  for (const double p : zero3) CHECK(p <= ddp_peak / 2 + unit);
  // Both runs end with where a step's time went (the 3 steps after the first); the sharded one
  // also splits out its waits, copies and the issuing of collectives.
  for (const auto* out : {&ddp_out, &fsdp_out})
    CHECK(contains(*out, "time per optimizer step: forward "));
  CHECK(contains(fsdp_out, "fsdp: besides compute, per optimizer step (mean of the 3 steps after the first): waiting "
                           "for parameter gathers "));
  CHECK_FALSE(contains(ddp_out, "besides compute"));
}

namespace {

// The "policy mlp (N parameters)" of a run's log.
double parameter_count(const std::string& output) {
  std::smatch m;
  REQUIRE(std::regex_search(output, m, std::regex(R"(policy mlp \((\d+) parameters\))")));
  return std::stod(m[1]);
}

}  // namespace

TEST_CASE("zero 1, 2 and 3 at 2 ranks stay near DeepSpeed's formulas: gradients stream into buckets reduced in place, masters are no copy") {
  TempDir dir("sk-zero-mem");
  const auto zero1_out = launch_ok(2, dir / "zero1", kModel, {"--distributed_backend=zero", "--accelerator.zero.stage=1"});
  const auto zero1 = peaks(zero1_out);
  // Buckets of 256 x 256 elements (accelerate's "auto" for hidden_size 256), and the default
  // (auto: an eighth of the model); both smaller than the model.
  const auto zero2 = peaks(launch_ok(2, dir / "zero2", kModel,
                                     {"--distributed_backend=zero", "--accelerator.zero.stage=2",
                                      "--accelerator.zero.reduce_bucket_size=65536"}));
  const auto zero2_auto =
      peaks(launch_ok(2, dir / "zero2-auto", kModel, {"--distributed_backend=zero", "--accelerator.zero.stage=2"}));
  const auto zero3 = peaks(launch_ok(2, dir / "zero3", kModel, {"--distributed_backend=zero", "--accelerator.zero.stage=3"}));
  REQUIRE(zero1.size() == 2);
  REQUIRE(zero2.size() == 2);
  REQUIRE(zero2_auto.size() == 2);
  REQUIRE(zero3.size() == 2);
  const double P = parameter_count(zero1_out);
  // DeepSpeed's formulas in fp32, N = 2: stage 1 = 4P + 4P + 8P/N, stage 2 = 4P + 12P/N, stage
  // 3 = 16P/N (model states only; activations are a few KB here). A second copy of the masters
  // (4P/N) or of a bucket's gradients (4P), or a copy of a reduction's input made by the
  // transport, would be above these bounds.
  const double stage1 = 12 * P, stage2 = 10 * P, stage3 = 8 * P;
  INFO("P " << P << ", zero1 " << zero1[0] << "/" << zero1[1] << " (formula " << stage1 << "), zero2 " << zero2[0]
            << "/" << zero2[1] << ", auto buckets " << zero2_auto[0] << "/" << zero2_auto[1] << " (formula " << stage2
            << "), zero3 " << zero3[0] << "/" << zero3[1] << " (formula " << stage3 << ")");
  // One rank may see one whole bucket (4P, the model here) more, once: Gloo's worker thread can
  // still hold a finished all-reduce's buffer when the gather after the optimizer step makes its
  // flat copy, if the machine is loaded (seen once in a suite run with tests in parallel).
  CHECK(std::min(zero1[0], zero1[1]) <= 1.1 * stage1);
  for (const double p : zero1) CHECK(p <= 1.1 * stage1 + 4 * P);
  for (const double p : zero2) CHECK(p <= 1.15 * stage2);
  // Auto buckets are an eighth of the model: at worst its range (2P bytes) and two buckets in
  // flight (P) besides the parameters and AdamW's half (8P), and Gloo's flat copy of a bucket
  // gathered after the step (P/2): 11.5P, 1.15 x the formula (measured: 1.08-1.10).
  for (const double p : zero2_auto) CHECK(p <= 1.2 * stage2);
  // Stage 3 holds gathered blocks and gradient buffers besides: at worst in backward the block
  // computing and the one prefetched, Gloo's flat copy of that gather, and two blocks' gradient
  // buffers (one filling, one reducing). How many of these overlap depends on timing, so the
  // bound is the worst case: 5 blocks of 1.05 MB (about 1.31 x the formula; measured: 1.26).
  for (const double p : zero3) CHECK(p <= stage3 + 5 * 1.05e6);
  // Stage 2 shards the gradients.
  CHECK(std::max(zero2[0], zero2[1]) < std::min(zero1[0], zero1[1]));
  CHECK(std::max(zero2_auto[0], zero2_auto[1]) < std::min(zero1[0], zero1[1]));
}
