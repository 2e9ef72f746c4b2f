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
