// The collective ledger's cost per collective: a local group (every collective completes at once)
// timed with and without the ledger around it, over many all-reduces of a small tensor.
//
//   build/bin/bench_ledger_record_cost [iterations]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <torch/torch.h>

#include "../../apps/shardkit-train/src/ledger.hpp"
#include "shardkit/comm.hpp"
#include "shardkit/ledger.hpp"

namespace {

double seconds_per_call(shardkit::CommGroup& group, int iterations) {
  auto t = torch::zeros({256});
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    shardkit::CollectiveScope scope("fsdp, unit blocks.1");
    group.all_reduce(t, shardkit::ReduceOp::Sum, /*async=*/true)->wait();
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 200000;
  auto plain = shardkit::make_local_group("world");
  auto ledger = std::make_shared<shardkit::ledger::Ledger>(nullptr, 0, 1, "fsdp", shardkit::ledger::Options{});
  auto recorded = ledger->wrap(shardkit::make_local_group("world"));
  seconds_per_call(*plain, iterations / 10);  // warm-up
  seconds_per_call(*recorded, iterations / 10);
  double best_plain = 1e9, best_recorded = 1e9;
  for (int round = 0; round < 5; ++round) {
    best_plain = std::min(best_plain, seconds_per_call(*plain, iterations));
    best_recorded = std::min(best_recorded, seconds_per_call(*recorded, iterations));
  }
  std::printf("per collective: %.3f us without the ledger, %.3f us with it: %.3f us recorded\n", best_plain * 1e6,
              best_recorded * 1e6, (best_recorded - best_plain) * 1e6);
  return 0;
}
