// A LoRA run's checkpoints need its base model again: --policy.path is stored absolute (the run
// resumes from any working directory), and the base's files are recorded with their sizes and
// checksums, so that a resume onto a base that changed since the run started is refused.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>

#include "../llama/llama_support.hpp"
#include "lora_runs.hpp"
#include "../distributed/train_in.hpp"

using namespace shardkit;
using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

/// Flips the last byte of `path` in place: the same size, other bytes (a tensor's last value).
void flip_last_byte(const std::string& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(-1, std::ios::end);
  char c = 0;
  f.get(c);
  f.seekp(-1, std::ios::end);
  f.put(static_cast<char>(c ^ 0x5a));
}

}  // namespace

TEST_CASE("a LoRA run started with a relative --policy.path resumes from another working directory") {
  TempDir dir("sk-lora-relative");
  peer("make " + shell_quote(dir / "base:0:0"));
  fs::create_directories(dir / "elsewhere");
  // Typed relative to the folder the run starts in.
  const auto r = train_in(dir.path(), lora_run("run", "base", 4, {"--save_freq=2"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto saved = dir / "run/checkpoints/000002";
  const auto config = boost::json::parse(slurp(saved + "/pretrained_model/train_config.json")).as_object();
  CHECK(std::string(config.at("policy").as_object().at("path").as_string()) == dir / "base");
  CHECK(contains(slurp(saved + "/pretrained_model/adapter_config.json"),
                 "\"base_model_name_or_path\": \"" + dir / "base" + "\""));

  roll_back_copy(dir / "run", dir / "resumed", "000002");
  const auto resumed = train_in(dir / "elsewhere", {"--resume=true", "--output_dir=" + dir / "resumed"});
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);  // before issue 26: "--policy.path=base is not a pretrained_model folder (no config.json)"
  CHECK(same_tensors(read_tensors(dir / "resumed/checkpoints/000004/pretrained_model/adapter_model.safetensors"),
                     read_tensors(dir / "run/checkpoints/000004/pretrained_model/adapter_model.safetensors")));
}

TEST_CASE("resuming a LoRA run onto a base model that changed since it started is refused, naming the file") {
  TempDir dir("sk-lora-base-changed");
  peer("make " + shell_quote(dir / "base:0:0"));
  const auto r = launch(1, lora_run(dir / "run", dir / "base", 4, {"--save_freq=2"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto record = slurp(dir / "run/checkpoints/000002/training_state/base_model.json");
  CHECK(contains(record, "\"model.safetensors\""));
  CHECK(contains(record, "\"xxh3_64\""));

  // Unchanged: the resume goes on.
  roll_back_copy(dir / "run", dir / "same", "000002");
  const auto same = launch(1, {"--resume=true", "--output_dir=" + dir / "same"});
  INFO(same.output);
  CHECK(same.exit_code == 0);

  // The same size, other bytes: refused before training, naming the file and the ways on.
  flip_last_byte(dir / "base/model.safetensors");
  roll_back_copy(dir / "run", dir / "changed", "000002");
  const auto changed = launch(1, {"--resume=true", "--output_dir=" + dir / "changed"});
  INFO(changed.output);
  CHECK(changed.exit_code != 0);  // before issue 26: resumes on the changed weights without a word
  CHECK(contains(changed.output, "the base model changed since this run started: " + dir / "base/model.safetensors" +
                                     " holds other bytes (same size, another XXH3-64 checksum)"));
  CHECK(contains(changed.output, "restore them at " + dir / "base"));
  CHECK(contains(changed.output, "train the adapter further on the changed base as a new run: --policy.path="));
  CHECK_FALSE(fs::exists(dir / "changed/checkpoints/000004"));
}
