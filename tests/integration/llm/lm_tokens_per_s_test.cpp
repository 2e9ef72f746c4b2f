// A text run logs its token throughput beside samples/s: tokens_per_s in metrics.jsonl and
// "tokens/s" on the console, counting the batches' real tokens (padding left out); a run on
// data without tokens logs none.
#include <catch2/catch.hpp>

#include <cmath>

#include "../distributed/launch.hpp"

using namespace shardkit::test;

TEST_CASE("a text run logs tokens_per_s (padding left out) in metrics.jsonl and tokens/s on the console") {
  TempDir dir("sk-lm-tokens");
  const auto made = run_command(python() + " " +
                                shell_quote(std::string(SHARDKIT_SOURCE_DIR) + "/tests/integration/llm/lm_fixture.py") +
                                " make " + shell_quote(dir.path()));
  INFO(made.output);
  REQUIRE(made.exit_code == 0);
  // One document per sample, right-padded to 64 tokens: padding is most of each batch.
  const auto r = run_program("shardkit-train",
                             {"--output_dir=" + dir / "run", "--policy.path=" + dir / "model", "--dataset.type=text",
                              "--dataset.path=" + dir / "data.jsonl", "--dataset.cache_dir=" + dir / "cache",
                              "--dataset.max_seq_len=64", "--dataset.packing=false", "--batch_size=4", "--steps=6",
                              "--log_freq=1", "--num_threads=1", "--seed=5"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, " tokens/s | updt "));  // before issue 26: samples/s only
  const auto lines = read_metrics(dir / "run");
  REQUIRE(lines.size() == 6);
  for (const auto& line : lines) {
    INFO("step " << line.step);
    REQUIRE(line.raw.count("tokens_per_s") == 1);
    // Both rates share the window's seconds: their ratio is the batch's tokens per sample, a
    // whole number of tokens over 4 samples, above the shortest document and below the padded width.
    const double per_sample = line.number("tokens_per_s") / line.number("samples_per_s");
    CHECK(std::abs(per_sample * 4 - std::round(per_sample * 4)) < 1e-6);
    CHECK(per_sample >= 1);
    CHECK(per_sample < 64);
  }
}

TEST_CASE("a run on data without tokens logs no tokens_per_s") {
  TempDir dir("sk-no-tokens");
  const auto r = run_program("shardkit-train", tiny_run(dir / "run", {"--steps=2"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(contains(r.output, "tokens/s"));
  for (const auto& line : read_metrics(dir / "run")) CHECK(line.raw.count("tokens_per_s") == 0);
}
