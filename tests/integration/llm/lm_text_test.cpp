// Language-model fine-tuning end to end: a transformers Llama folder with its tokenizer.json,
// jsonl text tokenized by shardkit's own tokenizer, 2 processes under fsdp with evaluation on a
// validation split; transformers then loads the checkpoint strictly.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <cmath>

#include "../distributed/launch.hpp"
#include "lm_fixture.hpp"

using namespace shardkit::test;

TEST_CASE("llama fine-tunes on jsonl text under fsdp at 2 ranks, evaluated, and transformers loads it") {
  TempDir dir("sk-lm-text");
  lm_fixture("make", dir.path());
  const auto r = launch(2, {"--output_dir=" + dir / "run", "--policy.path=" + dir / "model", "--dataset.type=text",
                            "--dataset.path=" + dir / "data.jsonl", "--dataset.max_seq_len=32",
                            "--dataset.validation_fraction=0.2", "--dataset.cache_dir=" + dir / "cache",
                            "--distributed_backend=fsdp", "--steps=24", "--eval_freq=8", "--log_freq=4",
                            "--batch_size=4", "--optimizer.lr=3e-3", "--num_threads=1", "--seed=5",
                            "--distributed.timeout_s=120"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "policy llama ("));
  CHECK(contains(r.output, "dataset text ("));
  CHECK(contains(r.output, "evaluation every 8 steps and at the last on the validation split"));
  std::vector<double> evals;
  for (const auto& line : read_metrics(dir / "run"))
    if (line.raw.count("eval_loss")) evals.push_back(line.number("eval_loss"));
  REQUIRE(evals.size() == 3);
  INFO("validation losses " << evals[0] << ", " << evals[1] << ", " << evals[2]);
  CHECK(evals[2] < evals[0]);

  const auto saved = dir / "run/checkpoints/last/pretrained_model";
  const auto out = lm_fixture("load", saved);
  const auto loss = boost::json::parse(out.substr(out.rfind('{'))).at("loss").to_number<double>();
  CHECK(std::isfinite(loss));
}
