// Where a resume continues: the run folder of the checkpoint given, and the newest checkpoint in place of `last`.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "../../../apps/shardkit-train/src/resume_location.hpp"
#include "shardkit/config.hpp"
#include "shardkit/error.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using shardkit::ConfigError;
using shardkit::RawConfig;
using shardkit::RawValue;
using shardkit::Value;
using shardkit::test::TempDir;
using shardkit::train::locate_resume;
using shardkit::train::newest_in_place_of_last;

namespace {

/// <checkpoints>/<step>/pretrained_model/train_config.json, made; returns its path.
std::string make_checkpoint(const fs::path& checkpoints, const std::string& step) {
  const auto pretrained = checkpoints / step / "pretrained_model";
  fs::create_directories(pretrained);
  const auto config = pretrained / "train_config.json";
  std::ofstream(config) << "{}\n";
  return config.string();
}

RawConfig output_dir(const std::string& folder, const std::string& origin) {
  return {{"output_dir", RawValue{Value{folder}, origin}}};
}

std::string normal(const fs::path& path) { return path.lexically_normal().string(); }

}  // namespace

TEST_CASE("locate_resume refuses a path that is not a checkpoint's train config", "[train][resume_location]") {
  TempDir tmp;
  const std::string expected = "expected <run>/checkpoints/<step>/pretrained_model/train_config.json";
  for (const auto& path : {tmp / "run/train_config.json", tmp / "run/checkpoints/000010/train_config.json",
                           tmp / "run/steps/000010/pretrained_model/train_config.json",
                           tmp / "run/checkpoints/000010/pretrained_model/config.json"}) {
    INFO(path);
    CHECK_THROWS_AS(locate_resume(path, {}, {}), ConfigError);
    CHECK_THROWS_WITH(locate_resume(path, {}, {}),
                      Catch::Contains("--config_path=" + path + " is not a checkpoint's train config with "
                                      "--resume=true: " + expected));
  }
}

TEST_CASE("locate_resume names a checkpoint folder that has no train config", "[train][resume_location]") {
  TempDir tmp;
  const auto path = tmp / "run/checkpoints/000010/pretrained_model/train_config.json";
  CHECK_THROWS_AS(locate_resume(path, {}, {}), ConfigError);
  CHECK_THROWS_WITH(locate_resume(path, {}, {}),
                    Catch::Contains("checkpoint folder " + normal(tmp / "run/checkpoints/000010") +
                                    " does not exist or has no pretrained_model/train_config.json"));
}

TEST_CASE("locate_resume returns the run folder, and replaces a saved output_dir naming another one with a notice",
          "[train][resume_location]") {
  TempDir tmp;
  const auto run = normal(tmp / "run");
  const auto config = make_checkpoint(fs::path(run) / "checkpoints", "000010");

  const auto plain = locate_resume(config, {}, {});
  CHECK(plain.run_dir == run);
  CHECK(plain.checkpoint_dir == normal(fs::path(run) / "checkpoints/000010"));
  CHECK(plain.notice.empty());

  const auto elsewhere = tmp / "moved-from";
  const auto moved = locate_resume(config, {}, output_dir(elsewhere, "saved config train_config.json:12:3"));
  CHECK(moved.run_dir == run);
  CHECK(moved.notice == "continuing in " + run + ", the folder that holds the checkpoint (its train_config.json names "
                        "output_dir=" + elsewhere + ")");

  // The same folder spelled otherwise is no move.
  const auto same = locate_resume(config, {}, output_dir(run + "/.", "saved config train_config.json:12:3"));
  CHECK(same.notice.empty());
}

TEST_CASE("locate_resume refuses an --output_dir other than the checkpoint's run folder", "[train][resume_location]") {
  TempDir tmp;
  const auto run = normal(tmp / "run");
  const auto config = make_checkpoint(fs::path(run) / "checkpoints", "000010");
  const auto other = tmp / "other";

  CHECK_THROWS_AS(locate_resume(config, output_dir(other, "--output_dir"), {}), ConfigError);
  CHECK_THROWS_WITH(locate_resume(config, output_dir(other, "--output_dir"), {}),
                    Catch::Contains("--output_dir=" + other + " is not the run folder of the checkpoint being resumed (" +
                                    run + ")"));

  // The flag naming the run folder itself wins over a saved output_dir: no notice.
  const auto own = locate_resume(config, output_dir(run, "--output_dir"), output_dir(other, "saved config x:1:1"));
  CHECK(own.run_dir == run);
  CHECK(own.notice.empty());
}

TEST_CASE("a resume through `last` continues from the newest checkpoint when the link was not moved",
          "[train][resume_location]") {
  TempDir tmp;
  const auto checkpoints = fs::path(normal(tmp / "run/checkpoints"));
  make_checkpoint(checkpoints, "000010");
  const auto newest = make_checkpoint(checkpoints, "000020");
  fs::create_directory_symlink("000010", checkpoints / "last");  // the save of 20 stopped before moving it
  const auto through_last = (checkpoints / "last/pretrained_model/train_config.json").string();

  std::string notice;
  CHECK(newest_in_place_of_last(through_last, notice) == newest);
  CHECK(notice == "resuming from " + (checkpoints / "000020").string() +
                      ", the newest checkpoint (checkpoints/last names 000010: its save was interrupted before the "
                      "link moved)");

  SECTION("when `last` names the newest, the path is kept") {
    fs::remove(checkpoints / "last");
    fs::create_directory_symlink("000020", checkpoints / "last");
    std::string kept_notice;
    CHECK(newest_in_place_of_last(through_last, kept_notice) == through_last);
    CHECK(kept_notice.empty());
  }
  SECTION("a path that does not go through `last` is kept, even with a newer checkpoint") {
    const auto older = (checkpoints / "000010/pretrained_model/train_config.json").string();
    std::string kept_notice;
    CHECK(newest_in_place_of_last(older, kept_notice) == older);
    CHECK(kept_notice.empty());
  }
}

TEST_CASE("a resume through `last` first restores a step whose re-save was interrupted", "[train][resume_location]") {
  TempDir tmp;
  const auto checkpoints = fs::path(normal(tmp / "run/checkpoints"));
  make_checkpoint(checkpoints, "000010");
  make_checkpoint(checkpoints, ".old-000030");  // step 30 moved aside, its new copy never published
  fs::create_directory_symlink("000010", checkpoints / "last");
  const auto through_last = (checkpoints / "last/pretrained_model/train_config.json").string();

  std::string notice;
  CHECK(newest_in_place_of_last(through_last, notice) ==
        (checkpoints / "000030/pretrained_model/train_config.json").string());
  CHECK(fs::is_directory(checkpoints / "000030/pretrained_model"));
  CHECK_FALSE(fs::exists(checkpoints / ".old-000030"));
  CHECK(notice == "restored checkpoints/000030 from .old-000030 (its new copy was never published); resuming from " +
                      (checkpoints / "000030").string() +
                      ", the newest checkpoint (checkpoints/last names 000010: its save was interrupted before the "
                      "link moved)");
}
