// A PEFT run's base model record as the run starts: recorded afresh, kept on resume, refused when the base changed.
#include <torch/types.h>  // before Catch, so that CHECK is Catch's (c10 defines one too)

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "../../../apps/shardkit-train/src/base_model_record.hpp"
#include "shardkit/comm.hpp"
#include "shardkit/error.hpp"
#include "test_support.hpp"

using namespace shardkit::train;
using shardkit::test::TempDir;
namespace fs = std::filesystem;

namespace {

void write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("a base model record at the start of a run: recorded, kept on resume, refused when the base changed") {
  TempDir dir("sk-base-record");
  const auto base = dir / "base";
  write(base + "/config.json", "{\"hidden_size\": 8}");
  write(base + "/model.safetensors", "weights, version 1");
  write(base + "/notes.txt", "not a weight file");
  auto world = shardkit::make_local_group();

  const auto fresh = base_model_record_at_start(*world, base, "");
  const auto record = BaseModelRecord::parse(fresh, "fresh");
  CHECK(record.files.size() == 2);  // config.json and the weights, not notes.txt
  CHECK(record.files.count("model.safetensors") == 1);
  CHECK(record.files.at("model.safetensors").size == std::string("weights, version 1").size());

  // A checkpoint that kept the record: the same base passes and its record carries on.
  const auto checkpoint = dir / "run/checkpoints/000004";
  write(checkpoint + "/" + kBaseModelFile, fresh);
  const auto kept = BaseModelRecord::parse(base_model_record_at_start(*world, base, checkpoint), "resumed");
  CHECK(kept.files.size() == record.files.size());
  CHECK(kept.files.at("model.safetensors").xxh3_64 == record.files.at("model.safetensors").xxh3_64);

  // The same size, other bytes: the checksum tells.
  write(base + "/model.safetensors", "weights, version 2");
  try {
    base_model_record_at_start(*world, base, checkpoint);
    FAIL("a changed base was accepted");
  } catch (const shardkit::ConfigError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("the base model changed since this run started"));
    CHECK_THAT(what, Catch::Contains("model.safetensors"));
    CHECK_THAT(what, Catch::Contains("--output_dir=<a new folder>"));
  }

  // A checkpoint of an older shardkit without a record: recorded now, from the base as it is.
  const auto older = dir / "run/checkpoints/000002";
  fs::create_directories(older);
  const auto now = BaseModelRecord::parse(base_model_record_at_start(*world, base, older), "older");
  CHECK(now.files.at("model.safetensors").xxh3_64 != record.files.at("model.safetensors").xxh3_64);
}
