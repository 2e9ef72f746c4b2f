// A manifest's file names stay inside the checkpoint folder: one that climbs out (or is absolute)
// makes the checkpoint damaged, and the file it names is never read.
#include "../../../apps/shardkit-train/src/checkpoint_manifest.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "shardkit/files.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using shardkit::train::manifest_problem;
using shardkit::train::Verify;

TEST_CASE("a manifest naming a file outside its checkpoint folder is refused without reading it") {
  shardkit::test::TempDir dir("sk-manifest-paths");
  const auto ckpt = fs::path(dir.path()) / "000001";
  fs::create_directories(ckpt);
  std::ofstream(fs::path(dir.path()) / "secret.txt") << "not the checkpoint's";
  for (const std::string name : {"../secret.txt", "pretrained_model/../../secret.txt", "/etc/hostname"}) {
    INFO(name);
    std::ofstream(ckpt / "manifest.json", std::ios::trunc)
        << R"({"kind": "shardkit checkpoint manifest", "files": {")" << name
        << R"(": {"size": 20, "xxh3_64": "0000000000000000"}}})";
    const auto problem = manifest_problem(ckpt.string(), Verify::Checksums);
    CHECK_THAT(problem, Catch::Contains("lists '" + name + "', a path outside the checkpoint folder"));
  }
}

TEST_CASE("stays_inside: relative names without '..' parts") {
  CHECK(shardkit::stays_inside("a"));
  CHECK(shardkit::stays_inside("pretrained_model/config.json"));
  CHECK(shardkit::stays_inside("a/..b/c..d"));
  CHECK_FALSE(shardkit::stays_inside(""));
  CHECK_FALSE(shardkit::stays_inside("/abs"));
  CHECK_FALSE(shardkit::stays_inside(".."));
  CHECK_FALSE(shardkit::stays_inside("a/../../b"));
  CHECK_FALSE(shardkit::stays_inside("a/.."));
}

TEST_CASE("a checkpoint holding a link that leads outside it is refused; links inside it are fine") {
  shardkit::test::TempDir dir("sk-manifest-links");
  const auto ckpt = fs::path(dir.path()) / "000001";
  fs::create_directories(ckpt / "pretrained_model");
  std::ofstream(ckpt / "pretrained_model/model.safetensors") << "twenty bytes exactly";
  std::ofstream(fs::path(dir.path()) / "secret.txt") << "not the checkpoint's";  // as long: sizes agree
  shardkit::train::write_manifest(ckpt.string());
  CHECK(manifest_problem(ckpt.string(), Verify::Sizes).empty());
  CHECK(shardkit::link_leaving(ckpt.string()).empty());

  // A link to a file of the checkpoint itself stays inside.
  fs::create_symlink("model.safetensors", ckpt / "pretrained_model/alias.safetensors");
  CHECK(shardkit::link_leaving(ckpt.string()).empty());
  fs::remove(ckpt / "pretrained_model/alias.safetensors");

  // The model file swapped for a link to a file outside, of the same size.
  fs::remove(ckpt / "pretrained_model/model.safetensors");
  fs::create_symlink("../../secret.txt", ckpt / "pretrained_model/model.safetensors");
  CHECK(shardkit::link_leaving(ckpt.string()) == "pretrained_model/model.safetensors -> ../../secret.txt");
  CHECK_THAT(manifest_problem(ckpt.string(), Verify::Sizes),
             Catch::Contains("it holds the link pretrained_model/model.safetensors -> ../../secret.txt, which leads "
                             "outside the checkpoint folder"));
  // A folder linked from outside is found too, whatever it holds.
  fs::remove(ckpt / "pretrained_model/model.safetensors");
  fs::create_directory_symlink(dir.path(), ckpt / "training_state");
  CHECK_THAT(shardkit::link_leaving(ckpt.string()), Catch::StartsWith("training_state -> "));
}
