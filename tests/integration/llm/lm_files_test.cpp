// What a fine-tuned language model keeps of its base folder: every tokenizer file, the chat
// template (chat_template.jinja, as transformers 5 saves it) included, in each checkpoint and in
// merged_model/, so that apply_chat_template works on it; and the start-up refusal of samples
// longer than the model's positions.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <filesystem>

#include "../distributed/launch.hpp"

using namespace shardkit::test;

namespace {

/// lm_fixture.py `command` `args`; fails the test (with its output) unless it succeeds.
std::string fixture(const std::string& command, const std::string& args) {
  const auto r = run_command(python() + " " + shell_quote(std::string(SHARDKIT_SOURCE_DIR) +
                                                          "/tests/integration/llm/lm_fixture.py") +
                             " " + command + " " + args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return r.output;
}

/// A fine-tuning run of the fixture's model on its text, one process, `extra` appended.
std::vector<std::string> text_run(const TempDir& dir, const std::string& out, std::vector<std::string> extra) {
  return with({"--output_dir=" + dir / out, "--policy.path=" + dir / "model", "--dataset.type=text",
               "--dataset.path=" + dir / "data.jsonl", "--dataset.cache_dir=" + dir / "cache", "--batch_size=4",
               "--optimizer.lr=1e-3", "--num_threads=1", "--seed=5", "--log_freq=1"},
              extra);
}

}  // namespace

TEST_CASE("checkpoints and merged_model keep every tokenizer file of the base, chat_template.jinja included") {
  TempDir dir("sk-lm-files");
  fixture("make", shell_quote(dir.path()));
  const auto base = dir / "model";
  // What transformers 5 saved for the tokenizer (the fixture checks chat_template.jinja is there).
  const std::vector<std::string> files = {"chat_template.jinja", "tokenizer.json", "tokenizer_config.json",
                                          "generation_config.json"};
  for (const auto& name : files) REQUIRE(std::filesystem::is_regular_file(base + "/" + name));

  const auto r = run_program("shardkit-train", text_run(dir, "run", {"--dataset.max_seq_len=32", "--steps=4",
                                                                     "--save_freq=4", "--peft.r=4", "--peft.merge=true"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto checkpoint = dir / "run/checkpoints/last/pretrained_model";
  const auto merged = dir / "run/merged_model";
  for (const auto* folder : {&checkpoint, &merged})
    for (const auto& name : files) {
      INFO(*folder << "/" << name);
      CHECK(std::filesystem::is_regular_file(*folder + "/" + name));  // before issue 26: chat_template.jinja is missing
      CHECK(slurp(*folder + "/" + name) == slurp(base + "/" + name));
    }

  // transformers' apply_chat_template gives the base's text on both folders.
  const auto out = fixture("chat", shell_quote(base) + " " + shell_quote(checkpoint) + " " + shell_quote(merged));
  INFO(out);
  const auto texts = boost::json::parse(out.substr(out.rfind('['))).as_array();
  REQUIRE(texts.size() == 3);
  const auto text = [&](std::size_t i) { return std::string(texts[i].as_string()); };
  CHECK(text(0) == "<|user|>pour the water<|endoftext|><|assistant|>into the cup<|endoftext|>");
  CHECK(text(1) == text(0));  // before issue 26: "error: Cannot use chat template functions ..."
  CHECK(text(2) == text(0));
}

TEST_CASE("--dataset.max_seq_len above the model's max_position_embeddings is refused, naming both") {
  TempDir dir("sk-lm-positions");
  fixture("make", shell_quote(dir.path()));  // max_position_embeddings 128
  const auto r = run_program("shardkit-train", text_run(dir, "run", {"--steps=2", "--dataset.max_seq_len=256"}));
  INFO(r.output);
  CHECK(r.exit_code != 0);  // before issue 26: trains on positions the model never saw
  CHECK(contains(r.output, "--dataset.max_seq_len=256 is longer than the model's max_position_embeddings=128 "
                           "(config.json of --policy.path=" + dir / "model" + ")"));
  CHECK(contains(r.output, "lower --dataset.max_seq_len to 128 or less"));
  CHECK_FALSE(std::filesystem::exists(dir / "run/checkpoints"));
}
