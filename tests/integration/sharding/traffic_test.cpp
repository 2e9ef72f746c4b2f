// The collective ledger's byte accounting against the ring algorithms' closed forms, on real
// runs through the launcher at 2 and 4 ranks: with P the model's parameters in fp32 (B = 4P
// bytes; the tiny mlp's every parameter has a multiple of 4 rows, so nothing is padded) and N
// ranks, one update sends ddp 2(N-1)/N B (all-reduce), fsdp (N-1)/N (3B - Broot) (gather forward
// and backward, reduce-scatter; the root unit, the parameters outside the blocks, stays gathered
// from forward to backward, as FSDP2's; 2(N-1)/N B keeping every unit after forward), zero1
// 3(N-1)/N B (all-reduce, then gather), zero2 2(N-1)/N B, zero3 as fsdp, and HSDP R x S its shard
// group's (S-1)/S (3B - Broot) plus the replica group's all-reduce of a shard, 2(R-1)/R B/S. (A shard
// group of every rank is the world: its collectives are counted under "world".)
#include <regex>

#include "sharded_runs.hpp"

using namespace shardkit::test;

namespace {

std::int64_t parameters_of(const std::string& output) {
  std::smatch m;
  const std::regex re("policy mlp \\((\\d+) parameters\\)");
  REQUIRE(std::regex_search(output, m, re));
  return std::stoll(m[1].str());
}

/// The sharded backends' gradient norm: one float64 all-reduced (2 (N-1)/N x 8 bytes).
constexpr double kNorm = 2;  // x ring(N, 8)

/// The tiny mlp's two blocks (hidden 32, expansion 2: LayerNorm 2 x 32, fc1 64 x 32 + 64, fc2
/// 32 x 64 + 32) in fp32 bytes; the rest of the model is the root unit.
constexpr double kBlockBytes = 4.0 * 2 * (2 * 32 + (64 * 32 + 64) + (32 * 64 + 32));

/// (N-1)/N x bytes, exactly (bytes is a multiple of N in every case here).
double ring(int n, double bytes) { return (n - 1) * bytes / n; }

struct Run {
  std::int64_t bytes = 0;  ///< 4P
  MetricsLine last;        ///< the last metrics line: the last update's traffic
  double root() const { return static_cast<double>(bytes) - kBlockBytes; }
  double value(const std::string& field) const {
    INFO(field);
    REQUIRE(last.raw.count(field) == 1);
    return last.number(field);
  }
};

/// `steps` loop steps with `batch` per rank; the last line's update is not the first (whose
/// traffic includes start-up's broadcasts).
Run traffic_run(int nproc, const std::string& out, const std::vector<std::string>& extra, int steps = 3,
                int batch = 4) {
  const std::vector<std::string> common = {"--steps=" + std::to_string(steps), "--save_checkpoint=false",
                                           "--batch_size=" + std::to_string(batch)};
  const auto output = launch_ok(nproc, out, common, extra);
  Run run;
  run.bytes = 4 * parameters_of(output);
  const auto lines = read_metrics(out);
  REQUIRE(lines.size() >= 2);
  run.last = lines.back();
  CHECK(contains(output, "collective traffic of this rank per optimizer update"));
  return run;
}

}  // namespace

TEST_CASE("the bytes each rank sends per update match the ring closed forms for ddp, fsdp, zero and HSDP") {
  TempDir dir("sk-traffic");
  for (const int n : {2, 4}) {
    const auto tag = std::to_string(n);
    INFO(n << " ranks");
    const auto shards = "--parallelism.dp_shard=" + tag;
    {
      const auto r = traffic_run(n, dir / ("ddp" + tag), {"--distributed_backend=ddp"});
      CHECK(r.value("comm/ddp/bytes_sent") == 2 * ring(n, r.bytes));
    }
    {
      const auto r = traffic_run(n, dir / ("fsdp" + tag), {shards});
      CHECK(r.value("comm/world/all_gather/bytes_sent") == ring(n, 2 * r.bytes - r.root()));
      CHECK(r.value("comm/world/reduce_scatter/bytes_sent") == ring(n, r.bytes));
      CHECK(r.value("comm/fsdp/bytes_sent") == ring(n, 3 * r.bytes - r.root()) + kNorm * ring(n, 8));
    }
    {
      const auto r = traffic_run(n, dir / ("keep" + tag), {shards, "--accelerator.fsdp.reshard_after_forward=false"});
      CHECK(r.value("comm/world/all_gather/bytes_sent") == ring(n, r.bytes));
      CHECK(r.value("comm/world/reduce_scatter/bytes_sent") == ring(n, r.bytes));
    }
    for (const int stage : {1, 2, 3}) {
      INFO("zero stage " << stage);
      const auto r = traffic_run(n, dir / ("zero" + std::to_string(stage) + "-" + tag),
                                 {"--distributed_backend=zero", "--accelerator.zero.stage=" + std::to_string(stage),
                                  "--accelerator.zero.stage3_param_persistence_threshold=0"});
      // Stage 1 all-reduces the gradients and gathers once, stage 2 reduce-scatters and gathers
      // once, stage 3 gathers as fsdp.
      const double moved = stage == 1 ? 3 * r.bytes : stage == 2 ? 2 * r.bytes : 3 * r.bytes - r.root();
      CHECK(r.value("comm/zero/bytes_sent") == ring(n, moved) + kNorm * ring(n, 8));
    }
  }
  // HSDP 2 x 2: the shard groups as fsdp at 2, and the replicas all-reduce a shard.
  const auto r = traffic_run(4, dir / "hsdp", {"--parallelism.dp_replicate=2", "--parallelism.dp_shard=2"});
  CHECK(r.value("comm/dp_shard/all_gather/bytes_sent") == ring(2, 2 * r.bytes - r.root()));
  CHECK(r.value("comm/dp_shard/reduce_scatter/bytes_sent") == ring(2, r.bytes));
  CHECK(r.value("comm/dp_replicate/all_reduce/bytes_sent") == 2 * ring(2, r.bytes / 2.0));
  CHECK(r.value("comm/padding_bytes_sent") == 0);
}

TEST_CASE("mixed precision moves bytes of the dtype on the wire; accumulation gathers per micro-step, reduces once") {
  TempDir dir("sk-traffic-mp");
  // bf16: parameters gathered in bf16 (2 bytes where fp32 has 4), gradients reduced in fp32
  // (the reduce dtype stays the masters' unless --accelerator.fsdp.mixed_precision_policy says).
  const auto bf16 = traffic_run(2, dir / "bf16", {"--parallelism.dp_shard=2", "--accelerator.mixed_precision=bf16"});
  CHECK(bf16.value("comm/world/all_gather/bytes_sent") == ring(2, (2 * bf16.bytes - bf16.root()) / 2));
  CHECK(bf16.value("comm/world/reduce_scatter/bytes_sent") == ring(2, bf16.bytes));
  // Two micro-steps per update: each gathers; only the last reduce-scatters (the first keeps
  // whole gradients, FSDP2's set_requires_gradient_sync(False)).
  const auto accum = traffic_run(2, dir / "accum",
                                 {"--parallelism.dp_shard=2", "--accelerator.gradient_accumulation.steps=2"}, 4, 2);
  CHECK(accum.value("comm/world/all_gather/bytes_sent") == 2 * ring(2, 2 * accum.bytes - accum.root()));
  CHECK(accum.value("comm/world/reduce_scatter/bytes_sent") == ring(2, accum.bytes));
}

TEST_CASE("padding is counted apart: fsdp at 3 ranks pads each parameter to a multiple of 3 rows") {
  TempDir dir("sk-traffic-pad");
  const auto r = traffic_run(3, dir / "fsdp3", {"--parallelism.dp_shard=3"});
  const double padding = r.value("comm/padding_bytes_sent");
  CHECK(padding > 0);
  // Without the padding, the closed form of the parameters themselves.
  const double unpadded = ring(3, 3 * r.bytes - r.root()) + kNorm * ring(3, 8);
  CHECK(r.value("comm/fsdp/bytes_sent") - padding == Approx(unpadded).epsilon(1e-12));
}
