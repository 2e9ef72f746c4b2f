// --dry_run=true: the per-rank memory plan for the degrees given, from one process, without training.
#include <filesystem>
#include <regex>

#include "sharded_runs.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

// The "= R x a whole replica's ..." ratio of a dry run's output.
double plan_ratio(const std::vector<std::string>& flags, const std::string& out_dir) {
  std::vector<std::string> args = {"--dry_run=true", "--output_dir=" + out_dir, "--policy.hidden_dim=256",
                                   "--policy.num_blocks=8"};
  args.insert(args.end(), flags.begin(), flags.end());
  const auto r = run_program("shardkit-train", args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "dry run: per rank (rank 0, the largest share): parameters"));
  CHECK_FALSE(fs::exists(out_dir));  // nothing trained, nothing written
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(= ([0-9.]+) x a whole replica)")));
  return std::stod(m[1]);
}

}  // namespace

TEST_CASE("a dry run prints each backend's plan for 8 processes from one process") {
  TempDir dir("sk-dry-run");
  CHECK(plan_ratio({"--parallelism.dp_replicate=8"}, dir / "ddp") == Approx(1.0));
  // fsdp over 8: a quarter of everything... an eighth of parameters, gradients and AdamW state,
  // plus two gathered blocks (2 x 1/8 of the model here) and the root.
  const auto fsdp8 = plan_ratio({"--distributed_backend=fsdp", "--parallelism.dp_shard=8"}, dir / "fsdp8");
  CHECK(fsdp8 < 0.2);
  CHECK(fsdp8 > 0.125);
  // HSDP 2 x 4 keeps twice the shard of fsdp over 8.
  const auto hsdp = plan_ratio({"--parallelism.dp_replicate=2", "--parallelism.dp_shard=4"}, dir / "hsdp");
  CHECK(hsdp > fsdp8);
  CHECK(hsdp < 0.35);
  // ZeRO-1 keeps whole parameters: more than ZeRO-3, less than ddp.
  const auto zero1 = plan_ratio({"--distributed_backend=zero", "--accelerator.zero.stage=1", "--parallelism.dp_shard=8"},
                                dir / "zero1");
  const auto zero3 = plan_ratio({"--distributed_backend=zero", "--parallelism.dp_shard=8"}, dir / "zero3");
  CHECK(zero3 < zero1);
  CHECK(zero1 < 0.5);
}
