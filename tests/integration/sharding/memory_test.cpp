// Per-rank peak of CPU tensor memory while training: fsdp and zero3 at 2 ranks against ddp.
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
  const auto ddp = peaks(launch_ok(2, dir / "ddp", kModel, {"--distributed_backend=ddp"}));
  const auto fsdp = peaks(launch_ok(2, dir / "fsdp", kModel, {"--distributed_backend=fsdp"}));
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
}
