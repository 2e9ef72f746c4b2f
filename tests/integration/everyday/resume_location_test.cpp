// Resume continues in the checkpoint's own run folder, from any working directory and in a copy.
#include <catch2/catch.hpp>

#include <filesystem>

#include "../distributed/train_in.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

const std::string kLast = "/checkpoints/last/pretrained_model/train_config.json";

}  // namespace

TEST_CASE("resume from another working directory continues in the checkpoint's run folder") {
  TempDir dir("sk-resume-cwd");
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  // A relative output_dir: the saved train_config.json names "run", relative to a/.
  const auto first = train_in(dir / "a", tiny_run("run", {"--steps=10", "--save_freq=10"}));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  const auto resumed = train_in(dir / "b", {"--resume=true", "--config_path=../a/run" + kLast, "--steps=20"});
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(contains(resumed.output, "resumed from"));
  CHECK(read_metrics(dir / "a/run").size() == 20);
  CHECK(fs::is_directory(dir / "a/run/checkpoints/000020"));
  CHECK(fs::is_empty(dir / "b"));  // nothing started in the working directory
}

TEST_CASE("resuming a copied run folder writes into the copy, not the original") {
  TempDir dir("sk-resume-copy");
  const auto first = run_program("shardkit-train", tiny_run(dir / "orig", {"--steps=10", "--save_freq=10"}));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  fs::copy(dir / "orig", dir / "copy", fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  const auto before = slurp(dir / "orig/metrics.jsonl");
  const auto resumed = run_program("shardkit-train", {"--resume=true", "--config_path=" + (dir / "copy") + kLast,
                                                      "--steps=20"});
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(contains(resumed.output, "continuing in " + (dir / "copy")));
  CHECK(read_metrics(dir / "copy").size() == 20);
  CHECK(fs::is_directory(dir / "copy/checkpoints/000020"));
  CHECK(slurp(dir / "orig/metrics.jsonl") == before);
  CHECK_FALSE(fs::exists(dir / "orig/checkpoints/000020"));

  SECTION("an explicit --output_dir elsewhere is refused") {
    const auto other = run_program("shardkit-train", {"--resume=true", "--config_path=" + (dir / "copy") + kLast,
                                                      "--output_dir=" + (dir / "orig"), "--steps=30"});
    INFO(other.output);
    CHECK(other.exit_code == 2);
    CHECK(contains(other.output, "is not the run folder of the checkpoint being resumed"));
    CHECK(read_metrics(dir / "orig").size() == 10);
  }
}

TEST_CASE("--config_path that is not a checkpoint's train_config.json names the expected path") {
  TempDir dir("sk-resume-path");
  const auto first = run_program("shardkit-train", tiny_run(dir / "run", {"--steps=10", "--save_freq=10"}));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  const std::string expected = "expected <run>/checkpoints/<step>/pretrained_model/train_config.json";
  for (const auto& path : {dir / "run", dir / "run/checkpoints/000010",
                           dir / "run/checkpoints/000010/pretrained_model/config.json"}) {
    const auto r = run_program("shardkit-train", {"--resume=true", "--config_path=" + path});
    INFO(path << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, expected));
  }
}
