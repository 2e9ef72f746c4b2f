// Shared pieces of the sharded-backend tests: runs through the launcher compared with one process.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "../distributed/launch.hpp"

namespace shardkit::test {

// Stated tolerance for fp32 loss curves: sharded runs sum gradients in another order (per
// rank, then across ranks) than one process; after 50 AdamW steps the curves agree to about
// 1e-6 relative on this model. 1e-4 leaves room for other BLAS builds.
constexpr double kShardedRelTol = 1e-4;

/// The run trained: its last five losses average well below its first five.
inline void require_trained(const std::vector<double>& got) {
  REQUIRE(got.size() >= 10);
  const auto mean = [&](std::size_t from) {
    double sum = 0;
    for (std::size_t i = from; i < from + 5; ++i) sum += got[i];
    return sum / 5;
  };
  CHECK(mean(got.size() - 5) < 0.8 * mean(0));
}

inline void require_same_curve(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  REQUIRE_FALSE(got.empty());
  const auto worst = worst_relative(got, want);
  INFO("worst relative loss difference " << worst);
  CHECK(worst <= kShardedRelTol);
  require_trained(got);
}

/// `nproc` processes of tiny_run(out, common + extra), checked to exit 0; returns the output.
inline std::string launch_ok(int nproc, const std::string& out, const std::vector<std::string>& common,
                             const std::vector<std::string>& extra) {
  auto args = tiny_run(out, common);
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = launch(nproc, args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return r.output;
}

/// One process of tiny_run(out, common + extra), checked to exit 0.
inline std::string single_ok(const std::string& out, const std::vector<std::string>& common,
                             const std::vector<std::string>& extra) {
  auto args = tiny_run(out, common);
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_program("shardkit-train", args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return r.output;
}

}  // namespace shardkit::test
