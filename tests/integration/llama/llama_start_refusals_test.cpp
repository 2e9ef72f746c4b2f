// Start-up refusals of a llama run that would otherwise mislead: samples longer than the model's
// positions, and a Hugging Face folder of a model type shardkit has no policy for.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "../distributed/launch.hpp"

using namespace shardkit::test;

TEST_CASE("samples longer than max_position_embeddings are refused at start-up, naming both numbers") {
  TempDir dir("sk-llama-positions");
  const std::vector<std::string> common = {
      "--policy.type=llama", "--policy.max_position_embeddings=16",
      "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/datasets", "--dataset.type=tokens_fixture",
      "--steps=2", "--num_threads=1"};
  const auto r = run_program("shardkit-train", with(common, {"--output_dir=" + dir / "long", "--dataset.max_len=24"}));
  INFO(r.output);
  CHECK(r.exit_code != 0);  // before issue 26: trains
  CHECK(contains(r.output, "the dataset's samples (24 tokens) are longer than the model's "
                           "--policy.max_position_embeddings=16"));
  // At the limit it trains.
  const auto fits = run_program("shardkit-train", with(common, {"--output_dir=" + dir / "fits", "--dataset.max_len=16"}));
  INFO(fits.output);
  CHECK(fits.exit_code == 0);
}

TEST_CASE("--policy.path at a gemma2 or phi3 folder names the model types shardkit supports") {
  TempDir dir("sk-llama-types");
  for (const std::string type : {"gemma2", "phi3"}) {
    INFO(type);
    const auto folder = dir / type;
    std::filesystem::create_directory(folder);
    std::ofstream(folder + "/config.json") << R"({"architectures": ["X"], "model_type": ")" << type
                                           << R"(", "hidden_size": 32, "num_hidden_layers": 2, "vocab_size": 128})";
    const auto r = run_program("shardkit-train", {"--policy.path=" + folder, "--output_dir=" + dir / (type + "-run")});
    INFO(r.output);
    CHECK(r.exit_code != 0);
    CHECK(contains(r.output, "holds a '" + type + "' model (config.json's model_type)"));
    CHECK(contains(r.output, "the Hugging Face model types it supports are 'llama', 'mistral', 'qwen2', 'qwen3'"));
    CHECK_FALSE(contains(r.output, "load its plugin"));  // before issue 26: points at a plugin that does not exist
  }
}
