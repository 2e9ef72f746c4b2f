// Checkpoint manifests: a damaged file is named before anything is loaded (sizes always,
// checksums unless --checkpoint.verify=false), and what an interrupted save leaves is sorted out on resume.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "../distributed/launch.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

/// 10 steps, checkpoints at 5 and 10, into `dir`/run; returns the run folder.
std::string trained_run(const TempDir& dir) {
  const auto out = dir / "run";
  const auto r = run_program("shardkit-train", tiny_run(out, {"--steps=10", "--save_freq=5"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  REQUIRE(fs::is_regular_file(out + "/checkpoints/000010/manifest.json"));
  return out;
}

ProcessResult resume(const std::string& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--resume=true", "--output_dir=" + out, "--steps=12", "--num_threads=1"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_program("shardkit-train", args);
}

}  // namespace

TEST_CASE("a truncated checkpoint file is named from the manifest, with the checkpoint to use instead") {
  TempDir dir("sk-manifest-size");
  const auto out = trained_run(dir);
  const auto model = out + "/checkpoints/000010/pretrained_model/model.safetensors";
  const auto size = fs::file_size(model);
  fs::resize_file(model, size - 100);
  const auto r = resume(out);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "pretrained_model/model.safetensors is " + std::to_string(size - 100) +
                               " bytes, its manifest says " + std::to_string(size)));
  CHECK(contains(r.output, "nothing was changed. Resume from " + out + "/checkpoints/000005"));
}

TEST_CASE("a resume finds a changed byte that keeps the size, unless --checkpoint.verify=false") {
  TempDir dir("sk-manifest-sum");
  const auto out = trained_run(dir);
  const auto model = out + "/checkpoints/000010/pretrained_model/model.safetensors";
  {
    std::fstream f(model, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-3, std::ios::end);
    char c = 0;
    f.get(c);
    f.seekp(-3, std::ios::end);
    f.put(static_cast<char>(c ^ 0x5a));
  }
  for (const auto* flag : {"", "--checkpoint.verify=true"}) {
    const auto verified = resume(out, std::string(flag).empty() ? std::vector<std::string>{}
                                                                : std::vector<std::string>{flag});
    INFO(flag << verified.output);
    CHECK(verified.exit_code == 1);
    CHECK(contains(verified.output, "pretrained_model/model.safetensors is damaged: its checksum differs from the "
                                    "manifest's (same size)"));
    CHECK(contains(verified.output, "nothing was changed. Resume from " + out + "/checkpoints/000005"));
  }
  // Asked not to verify, only sizes are compared: the same checkpoint loads.
  const auto unverified = resume(out, {"--checkpoint.verify=false"});
  INFO(unverified.output);
  CHECK(unverified.exit_code == 0);
}

TEST_CASE("a checkpoint missing a training-state file names the newest complete one, not last") {
  TempDir dir("sk-manifest-missing");
  const auto out = trained_run(dir);
  fs::remove(out + "/checkpoints/000010/training_state/scheduler_state.json");
  const auto r = resume(out);
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "training_state/scheduler_state.json"));
  CHECK(contains(r.output, "Resume from " + out + "/checkpoints/000005 (the newest other complete checkpoint)"));
  CHECK_FALSE(contains(r.output, "e.g. checkpoints/last"));
  CHECK(fs::read_symlink(out + "/checkpoints/last") == "000010");
}

TEST_CASE("a resume sorts out what an interrupted save left, without help") {
  TempDir dir("sk-manifest-left");
  const auto out = trained_run(dir);
  const auto checkpoints = out + "/checkpoints";
  SECTION("the link was not moved yet: the newest folder is used, and said so") {
    fs::remove(checkpoints + "/last");
    fs::create_directory_symlink("000005", checkpoints + "/last");
    const auto r = resume(out);
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.output, "resuming from " + checkpoints + "/000010, the newest checkpoint (checkpoints/last "
                             "names 000005: its save was interrupted before the link moved)"));
    CHECK(contains(r.output, "at step 10"));
  }
  SECTION("a staging folder and a stale link: removed") {
    fs::create_directories(checkpoints + "/.tmp-000015/pretrained_model");
    fs::create_directory_symlink("000015", checkpoints + "/.last.tmp");
    const auto r = resume(out);
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.output, "removed checkpoints/.tmp-000015, left by a save that was interrupted"));
    CHECK_FALSE(fs::exists(checkpoints + "/.tmp-000015"));
    CHECK_FALSE(fs::is_symlink(checkpoints + "/.last.tmp"));
  }
  SECTION("a step saved again, killed between moving the old copy aside and publishing the new one") {
    fs::rename(checkpoints + "/000010", checkpoints + "/.old-000010");
    const auto r = resume(out);
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.output, "restored checkpoints/000010 from .old-000010 (its new copy was never published)"));
    CHECK(contains(r.output, "at step 10"));
  }
}
