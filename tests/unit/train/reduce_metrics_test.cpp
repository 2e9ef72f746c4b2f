// Metric reduction across ranks: loss and policy metrics averaged, timings the slowest rank's, throughput summed.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's (c10 defines one too)

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../../../apps/shardkit-train/src/rank_agreement.hpp"
#include "scripted_group.hpp"
#include "shardkit/comm.hpp"

using shardkit::ReduceOp;
using shardkit::test::ScriptedGroup;
using shardkit::train::MetricsRecord;
using shardkit::train::reduce_metrics;

namespace {

MetricsRecord this_ranks_record() {
  MetricsRecord record;
  record.step = 7;
  record.loss = 1.0;
  record.lr = 0.01;
  record.grad_norm = 1.5;
  record.samples_per_s = 100.0;
  record.tokens_per_s = 1000.0;
  record.update_s = 0.5;
  record.dataloading_s = 0.125;
  record.preprocessing_s = 0.5;
  record.step_s = 1.0;
  record.policy = {{"a_loss", 0.25}, {"b_loss", 0.5}};
  return record;
}

}  // namespace

TEST_CASE("reduce_metrics averages the loss and policy metrics, sums throughput and keeps the slowest timings",
          "[train][metrics]") {
  // The other rank: loss 3, 50 samples/s, 500 tokens/s; update 0.25 s, data 0.375 s, preprocessing
  // 0.0625 s, step 1.25 s; a_loss 0.75, b_loss 1.5.
  ScriptedGroup group({torch::tensor({3.0, 50.0, 500.0}, torch::kFloat64),
                       torch::tensor({0.25, 0.375, 0.0625, 1.25}, torch::kFloat64),
                       torch::tensor({0.75, 1.5}, torch::kFloat64)});
  auto record = this_ranks_record();
  reduce_metrics(group, record);

  CHECK(record.loss == 2.0);
  CHECK(record.samples_per_s == 150.0);
  REQUIRE(record.tokens_per_s.has_value());
  CHECK(*record.tokens_per_s == 1500.0);
  CHECK(record.update_s == 0.5);        // this rank was slower
  CHECK(record.dataloading_s == 0.375);  // the other rank was slower
  CHECK(record.preprocessing_s == 0.5);
  CHECK(record.step_s == 1.25);
  CHECK(record.policy.at("a_loss") == 0.5);
  CHECK(record.policy.at("b_loss") == 1.0);
  CHECK(record.policy.size() == 2);
  // The update's values are the same on every rank and are not reduced.
  CHECK(record.lr == 0.01);
  CHECK(record.grad_norm == 1.5);
  CHECK(record.step == 7);

  REQUIRE(group.used() == 3);
  std::vector<std::string> ops;  // by name: Catch prints strings, not ReduceOp
  for (const auto op : group.ops) ops.emplace_back(shardkit::to_string(op));
  const std::vector<std::string> expected{shardkit::to_string(ReduceOp::Sum), shardkit::to_string(ReduceOp::Max),
                                          shardkit::to_string(ReduceOp::Sum)};
  CHECK(ops == expected);
}

TEST_CASE("reduce_metrics leaves tokens_per_s unset without tokens, and needs no collective for no policy metrics",
          "[train][metrics]") {
  ScriptedGroup group({torch::tensor({3.0, 50.0, 0.0}, torch::kFloat64),
                       torch::tensor({0.25, 0.375, 0.0625, 1.25}, torch::kFloat64)});
  auto record = this_ranks_record();
  record.tokens_per_s.reset();
  record.policy.clear();
  reduce_metrics(group, record);  // a third all-reduce would throw: it is not scripted

  CHECK_FALSE(record.tokens_per_s.has_value());
  CHECK(record.loss == 2.0);
  CHECK(record.samples_per_s == 150.0);
  CHECK(group.used() == 2);
}

TEST_CASE("reduce_metrics in one process leaves the record as it is", "[train][metrics]") {
  auto group = shardkit::make_local_group();
  auto record = this_ranks_record();
  reduce_metrics(*group, record);
  CHECK(record.loss == 1.0);
  CHECK(record.samples_per_s == 100.0);
  REQUIRE(record.tokens_per_s.has_value());
  CHECK(*record.tokens_per_s == 1000.0);
  CHECK(record.dataloading_s == 0.125);
  CHECK(record.policy.at("a_loss") == 0.25);
}
