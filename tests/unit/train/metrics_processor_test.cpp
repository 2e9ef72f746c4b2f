// The metrics processor alone: log cadence, window averages, throughput, tokens, reduction.
#include <torch/torch.h>  // before Catch: c10 defines a CHECK of its own, which Catch's replaces

#include <catch2/catch.hpp>

#include "../../../apps/shardkit-train/src/metrics_processor.hpp"
#include "scripted_group.hpp"
#include "shardkit/comm.hpp"

using shardkit::train::LogWindow;
using shardkit::train::MetricsProcessor;
using shardkit::train::StepValues;
using namespace std::chrono_literals;

namespace {

StepValues step(std::int64_t done, bool update, double loss, double l1 = 0) {
  StepValues v;
  v.done = done;
  v.update = update;
  v.loss_part = loss;
  v.policy = {{"l1_loss", l1}};
  v.data_s = 0.01;
  v.preprocessing_s = 0.002;
  v.update_s = 0.1;
  v.step_s = 0.125;
  return v;
}

}  // namespace

TEST_CASE("a line is due at updates past a multiple of log_freq, at the last step and with evaluation") {
  auto local = shardkit::make_local_group();
  // Every step an update: lines at 3, 6, 9 and the last step.
  MetricsProcessor every_step(/*steps=*/10, /*log_freq=*/3, /*batch_size=*/4, {});
  every_step.start(0, {});
  std::vector<std::int64_t> lines;
  for (std::int64_t done = 1; done <= 10; ++done) {
    every_step.add(step(done, true, 1.0));
    if (every_step.due(done, /*update=*/true, /*evaluated=*/false)) {
      every_step.write_line(done, {}, *local);
      lines.push_back(done);
    }
  }
  const std::vector<std::int64_t> expected{3, 6, 9, 10};
  CHECK(lines == expected);

  // An update every 2 steps: only an update writes, once a multiple of 3 has been passed since
  // the last line; evaluation and the last step always write.
  MetricsProcessor accumulating(10, 3, 4, {});
  accumulating.start(0, {});
  CHECK_FALSE(accumulating.due(2, /*update=*/true, false));
  CHECK_FALSE(accumulating.due(3, /*update=*/false, false));
  CHECK(accumulating.due(4, /*update=*/true, false));
  CHECK(accumulating.due(2, /*update=*/true, /*evaluated=*/true));
  CHECK(accumulating.due(10, /*update=*/false, false));
  accumulating.add(step(4, true, 1.0));
  accumulating.write_line(4, {}, *local);
  CHECK_FALSE(accumulating.due(5, /*update=*/true, false));  // 5 / 3 == 4 / 3: no multiple passed
  CHECK(accumulating.due(6, /*update=*/true, false));
}

TEST_CASE("a line averages its window, times throughput by the clock given, and starts a new window") {
  auto local = shardkit::make_local_group();
  const auto t0 = MetricsProcessor::Clock::time_point{};
  MetricsProcessor metrics(/*steps=*/8, /*log_freq=*/2, /*batch_size=*/4, {});
  metrics.start(0, {}, t0);
  metrics.add(step(1, true, 1.0, 0.5));
  metrics.add(step(2, true, 3.0, 1.5));
  const auto first = metrics.write_line(2, {0.25, 1e-3, 0.7, {}}, *local, t0 + 2s);
  CHECK(first.step == 2);
  CHECK(first.total_steps == 8);
  CHECK(first.loss == Approx(2.0));
  CHECK(first.policy.at("l1_loss") == Approx(1.0));
  CHECK(first.samples_per_s == Approx(2 * 4 / 2.0));  // 2 steps of 4 samples in 2 s
  CHECK(first.update_s == Approx(0.1));
  CHECK(first.dataloading_s == Approx(0.01));
  CHECK(first.preprocessing_s == Approx(0.002));
  CHECK(first.step_s == Approx(0.125));
  CHECK(first.elapsed_s == Approx(2.0));
  CHECK(first.epoch == 0.25);
  CHECK(first.lr == 1e-3);
  CHECK(first.grad_norm == 0.7);
  CHECK_FALSE(first.tokens_per_s.has_value());  // no input_ids: not a text run
  CHECK(metrics.window().micro_steps == 0);

  metrics.add(step(3, true, 5.0, 2.0));
  const auto second = metrics.write_line(3, {0.375, 1e-3, 0.6, {{"eval_loss", 4.0}}}, *local, t0 + 3s);
  CHECK(second.loss == Approx(5.0));  // the new window only
  CHECK(second.samples_per_s == Approx(4 / 1.0));
  CHECK(second.policy.at("eval_loss") == 4.0);
  CHECK(second.elapsed_s == Approx(3.0));
}

TEST_CASE("a resumed window joins the first line after a resume") {
  auto local = shardkit::make_local_group();
  LogWindow carried;
  carried.micro_steps = 1;
  carried.loss_sum = 5.0;
  carried.policy_sums["l1_loss"] = 3.0;
  MetricsProcessor metrics(8, 2, 4, {});
  metrics.start(/*first_step=*/5, carried);
  CHECK(metrics.window().loss_sum == 5.0);
  metrics.add(step(6, true, 1.0, 1.0));
  const auto line = metrics.write_line(6, {}, *local);
  CHECK(line.first_step == 5);
  CHECK(line.loss == Approx(3.0));  // (5 + 1) / 2 micro-steps
  CHECK(line.policy.at("l1_loss") == Approx(2.0));
}

TEST_CASE("a text run's tokens leave padding out and are counted per second") {
  using shardkit::train::batch_tokens;
  const auto ids = torch::ones({2, 4}, torch::kLong);
  CHECK_FALSE(batch_tokens({{"state", torch::zeros({2, 3})}}).has_value());
  CHECK(batch_tokens({{"input_ids", ids}}) == 8);
  CHECK(batch_tokens({{"input_ids", ids}, {"labels", torch::tensor({{1, 2, -100, -100}, {3, -100, -100, -100}})}}) == 3);
  CHECK(batch_tokens({{"input_ids", ids},
                      {"attention_mask", torch::tensor({{1, 1, 1, 0}, {1, 1, 0, 0}})},
                      {"labels", torch::full({2, 4}, -100, torch::kLong)}}) == 5);

  auto local = shardkit::make_local_group();
  const auto t0 = MetricsProcessor::Clock::time_point{};
  MetricsProcessor metrics(4, 1, 2, {});
  metrics.start(0, {}, t0);
  metrics.count_tokens({{"input_ids", ids}});
  metrics.add(step(1, true, 1.0));
  const auto line = metrics.write_line(1, {}, *local, t0 + 4s);
  REQUIRE(line.tokens_per_s.has_value());
  CHECK(*line.tokens_per_s == Approx(8 / 4.0));
}

TEST_CASE("a line is reduced across ranks before it is logged") {
  // The other rank's (loss, samples/s, tokens/s), (update_s, dataloading_s, preprocessing_s,
  // step_s) and l1_loss.
  shardkit::test::ScriptedGroup pair({torch::tensor({4.0, 8.0, 0.0}, torch::kFloat64),
                                      torch::tensor({0.3, 0.02, 0.001, 0.5}, torch::kFloat64),
                                      torch::tensor({3.0}, torch::kFloat64)});
  const auto t0 = MetricsProcessor::Clock::time_point{};
  MetricsProcessor metrics(4, 1, 4, {});
  metrics.start(0, {}, t0);
  metrics.add(step(1, true, 2.0, 1.0));
  const auto line = metrics.write_line(1, {}, pair, t0 + 1s);
  CHECK(pair.used() == 3);
  CHECK(line.loss == Approx(3.0));               // (2 + 4) / 2
  CHECK(line.policy.at("l1_loss") == Approx(2.0));
  CHECK(line.samples_per_s == Approx(4.0 + 8.0));  // 4 samples in 1 s here, 8/s there
  CHECK(line.update_s == Approx(0.3));             // the slower rank's
  CHECK(line.dataloading_s == Approx(0.02));
  CHECK(line.preprocessing_s == Approx(0.002));    // this rank's
  CHECK(line.step_s == Approx(0.5));
}
