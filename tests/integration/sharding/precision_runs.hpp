// Shared pieces of the mixed-precision tests (act_precision_test, policy_precision_test): the
// sharded backends and precisions every policy is run under, and the check of a run's curve
// against ddp's bf16 curve.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "sharded_runs.hpp"

namespace shardkit::test {

/// The run's logged losses, one per step, each checked to be finite.
inline std::vector<double> finite_losses(const std::string& out) {
  const auto got = losses(out);
  for (const auto loss : got) CHECK(std::isfinite(loss));
  return got;
}

/// One sharded run: its folder name, its precision (bf16 or fp16) and its backend flags.
struct PrecisionCase {
  std::string name, mode;
  std::vector<std::string> backend;
};

/// fsdp (dp_shard 2) and zero stages 1-3, each in bf16 and fp16.
inline std::vector<PrecisionCase> sharded_precision_cases() {
  std::vector<PrecisionCase> cases;
  for (const std::string mode : {"bf16", "fp16"}) {
    cases.push_back({"fsdp-" + mode, mode, {"--distributed_backend=fsdp", "--parallelism.dp_shard=2"}});
    for (const std::string stage : {"1", "2", "3"})
      cases.push_back({"zero" + stage + "-" + mode, mode,
                       {"--distributed_backend=zero", "--accelerator.zero.stage=" + stage}});
  }
  return cases;
}

/// Checks run `c` (its `output`, its folder `out`): the engine applied the precision, and every
/// logged loss is finite and within `tolerance` relative of `want` (ddp's bf16 curve).
inline void check_on_curve(const PrecisionCase& c, const std::string& output, const std::string& out,
                           const std::vector<double>& want, double tolerance) {
  INFO("case " << c.name);
  CHECK(contains(output, "mixed precision " + c.mode + " (params "));  // the engine applied it
  const auto got = finite_losses(out);
  REQUIRE(got.size() == want.size());
  INFO("worst relative loss difference from ddp bf16: " << worst_relative(got, want));
  CHECK(worst_relative(got, want) <= tolerance);
}

}  // namespace shardkit::test
