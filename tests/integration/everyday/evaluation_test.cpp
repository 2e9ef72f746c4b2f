// --eval_freq: the mean loss (and its exp, the perplexity) on the dataset's validation split,
// logged with the step; the same at any number of processes and under a sharded backend.
#include <catch2/catch.hpp>

#include <cmath>

#include "../distributed/launch.hpp"

using namespace shardkit::test;

TEST_CASE("--eval_freq logs the validation loss, the same in one process and under fsdp at 2") {
  TempDir dir("sk-eval");
  const std::vector<std::string> eval = {"--steps=12", "--log_freq=10", "--eval_freq=4",
                                         "--dataset.validation_samples=64"};
  const auto one = run_program("shardkit-train", tiny_run(dir / "one", with(eval, {"--batch_size=8"})));
  INFO(one.output);
  REQUIRE(one.exit_code == 0);
  CHECK(contains(one.output, "evaluation every 4 steps and at the last on the validation split (64 samples)"));
  const auto two = launch(2, tiny_run(dir / "two", with(eval, {"--batch_size=4", "--distributed_backend=fsdp"})));
  INFO(two.output);
  REQUIRE(two.exit_code == 0);

  // Lines at steps 4, 8 (evaluations), 10 (log_freq) and 12 (the last, evaluated too).
  const auto a = read_metrics(dir / "one");
  const auto b = read_metrics(dir / "two");
  REQUIRE(a.size() == 4);
  REQUIRE(b.size() == 4);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("line " << i << " step " << a[i].step);
    CHECK(a[i].raw.count("eval_loss") == (a[i].step == 10 ? 0u : 1u));
    if (!a[i].raw.count("eval_loss")) continue;
    const double loss = a[i].number("eval_loss");
    CHECK(a[i].number("eval_perplexity") == Approx(std::exp(loss)).epsilon(1e-12));
    CHECK(std::abs(b[i].number("eval_loss") - loss) <= 1e-5 * loss);
  }
  // The model learns the task, so the held-out loss falls.
  CHECK(a[3].number("eval_loss") < a[0].number("eval_loss"));
}

TEST_CASE("--eval_freq without a validation split, or off the optimizer updates, is refused") {
  TempDir dir("sk-eval-bad");
  const auto none = run_program("shardkit-train", tiny_run(dir / "none", {"--eval_freq=4", "--steps=8"}));
  CHECK(none.exit_code == 2);
  CHECK(contains(none.output, "--dataset.split=validation needs --dataset.validation_samples > 0"));
  const auto off = run_program("shardkit-train",
                               tiny_run(dir / "off", {"--eval_freq=3", "--steps=8", "--dataset.validation_samples=64",
                                                      "--accelerator.gradient_accumulation.steps=2"}));
  CHECK(off.exit_code == 2);
  CHECK(contains(off.output, "--eval_freq=3 is not a multiple of --accelerator.gradient_accumulation.steps=2"));
}
