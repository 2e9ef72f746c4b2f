// --epochs sets the run's length in passes over the dataset, at any number of processes.
#include <catch2/catch.hpp>

#include "../distributed/launch.hpp"

using namespace shardkit::test;

TEST_CASE("--epochs=2 trains two passes over the dataset: 64 samples / (4 x ranks) batches each") {
  TempDir dir("sk-epochs");
  const auto one = run_program("shardkit-train", tiny_run(dir / "one", {"--epochs=2", "--dataset.num_samples=64",
                                                                        "--batch_size=4", "--log_freq=1"}));
  INFO(one.output);
  REQUIRE(one.exit_code == 0);
  CHECK(contains(one.output, "--epochs=2: 32 loop steps (16 batches of 4 x 1 dp workers per epoch of 64 samples)"));
  CHECK(read_metrics(dir / "one").size() == 32);

  // Two ranks and 3 accumulation steps: 8 batches per epoch, 16 rounded up to 18.
  const auto two = launch(2, tiny_run(dir / "two", {"--epochs=2", "--dataset.num_samples=64", "--batch_size=4",
                                                    "--accelerator.gradient_accumulation.steps=3", "--save_freq=3"}));
  INFO(two.output);
  REQUIRE(two.exit_code == 0);
  CHECK(contains(two.output, "--epochs=2: 18 loop steps (8 batches of 4 x 2 dp workers per epoch of 64 samples, "
                             "rounded up to whole optimizer updates)"));
  CHECK(contains(two.output, "training done: 18 steps"));
}

TEST_CASE("--epochs and --steps both on the command line are refused") {
  TempDir dir("sk-epochs-both");
  const auto r = run_program("shardkit-train", tiny_run(dir / "run", {"--epochs=2", "--steps=10"}));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--epochs=2 and --steps=10 both set the length of the run: give one"));
}
