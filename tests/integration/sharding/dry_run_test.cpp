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
  // ZeRO-1 keeps whole parameters (its eighth of the fp32 masters is their range, not a copy),
  // whole (averaged) gradients and an eighth of AdamW's state: (4 + 4 + 8/8) / 16 of ddp. More
  // than ZeRO-3, less than ddp.
  const auto zero1 = plan_ratio({"--distributed_backend=zero", "--accelerator.zero.stage=1", "--parallelism.dp_shard=8"},
                                dir / "zero1");
  const auto zero3 = plan_ratio({"--distributed_backend=zero", "--parallelism.dp_shard=8"}, dir / "zero3");
  CHECK(zero3 < zero1);
  CHECK(zero1 == Approx(9.0 / 16).epsilon(0.02));
  // ZeRO-2 in small buckets keeps an eighth of the gradients and two buckets in flight (here
  // the two largest weights, 256 x 512 each: an eighth of the model together), so between
  // ZeRO-3 and ZeRO-1: (4 + 4/8 + 4/8 + 8/8) / 16. In one bucket (DeepSpeed's 5e8 elements
  // are more than this model) that bucket's reduction input is the whole model's gradients,
  // as ZeRO-1's, besides the reduced range. The default (auto) cuts buckets of an eighth of
  // the model, so two in flight hold a quarter of it at most: (4 + 4/8 + 4/4 + 8/8) / 16.
  const auto zero2 = plan_ratio({"--distributed_backend=zero", "--accelerator.zero.stage=2",
                                 "--accelerator.zero.reduce_bucket_size=1000", "--parallelism.dp_shard=8"},
                                dir / "zero2");
  CHECK(zero2 < zero1);
  CHECK(zero2 > zero3);
  CHECK(zero2 == Approx(6.0 / 16).epsilon(0.02));
  const auto one_bucket = plan_ratio({"--distributed_backend=zero", "--accelerator.zero.stage=2",
                                      "--accelerator.zero.reduce_bucket_size=500000000", "--parallelism.dp_shard=8"},
                                     dir / "zero2-one-bucket");
  CHECK(one_bucket == Approx(9.5 / 16).epsilon(0.02));  // ZeRO-1's whole gradients, and the range beside them
  const auto zero2_auto = plan_ratio({"--distributed_backend=zero", "--accelerator.zero.stage=2", "--parallelism.dp_shard=8"},
                                     dir / "zero2-auto");
  CHECK(zero2_auto < zero1);
  CHECK(zero2_auto >= zero2);
  CHECK(zero2_auto <= 6.5 / 16 + 0.01);
}

namespace {

// A Llama whose activations (8 x 256 tokens, attention scores of 4 heads) outweigh its state.
std::vector<std::string> llama_flags(const std::string& out, const std::vector<std::string>& extra) {
  return with({"--output_dir=" + out, "--policy.type=llama", "--policy.vocab_size=512", "--policy.hidden_size=128",
               "--policy.intermediate_size=344", "--policy.num_hidden_layers=4", "--policy.num_attention_heads=4",
               "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/datasets", "--dataset.type=tokens_fixture",
               "--dataset.vocab_size=512", "--dataset.min_len=256", "--dataset.max_len=256", "--dataset.num_samples=64",
               "--batch_size=8", "--steps=3", "--save_checkpoint=false", "--num_threads=1", "--log_freq=1"},
              extra);
}

std::int64_t bytes_after(const std::string& output, const std::string& label) {
  std::smatch m;
  const std::regex pattern(label + R"([^\n]*?\(([0-9]+) bytes\))");
  INFO("looking for: " << label);
  REQUIRE(std::regex_search(output, m, pattern));
  return std::stoll(m[1]);
}

}  // namespace

TEST_CASE("a dry run measures activations with and without checkpointing and predicts the peak within 20 %") {
  TempDir dir("sk-dry-run-act");
  for (const std::string mode : {"none", "full"}) {
    INFO("activation checkpointing " << mode);
    const auto flag = "--accelerator.activation_checkpointing.mode=" + mode;
    const auto plan = run_program("shardkit-train", llama_flags(dir / ("plan-" + mode), {"--dry_run=true", flag}));
    INFO(plan.output);
    REQUIRE(plan.exit_code == 0);
    CHECK(contains(plan.output, "dry run: activations per rank, measured on one fp32 micro-batch of 8 samples"));
    // A 1 M-parameter model fits any machine that runs this suite.
    CHECK(contains(plan.output, "dry run: 1 process(es) of this plan on this machine need about"));
    CHECK(contains(plan.output, "of tensor memory, within the"));
    const auto none = bytes_after(plan.output, "dry run: activations per rank");
    const auto expected = bytes_after(plan.output, "dry run: expected peak tensor memory per rank");
    const auto run = run_program("shardkit-train", llama_flags(dir / ("run-" + mode), {flag}));
    INFO(run.output);
    REQUIRE(run.exit_code == 0);
    const auto measured = bytes_after(run.output, "peak CPU tensor memory while training");
    const double ratio = static_cast<double>(expected) / static_cast<double>(measured);
    WARN(mode << ": predicted " << expected << " bytes, measured " << measured << " (ratio " << ratio
              << "); activations without checkpointing " << none << " bytes");
    CHECK(ratio > 0.8);
    CHECK(ratio < 1.2);
  }
}
