// --policy.path at a LeRobot-form ACT checkpoint that does not fit: another policy type, a camera
// the dataset lacks, another state size, a damaged processor file. Each a clear error, no crash.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>

#include "../distributed/launch.hpp"
#include "act_runs.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

/// A copy of `from` whose config.json went through `edit`.
std::string edited_copy(const fs::path& from, const fs::path& to, const std::function<void(json::object&)>& edit) {
  fs::copy(from, to, fs::copy_options::recursive);
  std::ifstream in(to / "config.json");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  auto config = json::parse(text);
  edit(config.as_object());
  std::ofstream(to / "config.json", std::ios::trunc) << json::serialize(config);
  return to.string();
}

/// shardkit-train --policy.path=<pretrained> on the tiny dataset, the policy type left to the
/// checkpoint (as a LeRobot user writes it) unless `type_flag` is given.
ProcessResult start_from(const fs::path& dir, const std::string& pretrained, const std::string& type_flag = "") {
  std::vector<std::string> args;
  static int runs = 0;
  for (const auto& a : act_flags((dir / ("again" + std::to_string(runs++))).string()))
    if (a.rfind("--policy.type=", 0) != 0 && a.rfind("--policy.", 0) != 0) args.push_back(a);
  if (!type_flag.empty()) args.push_back(type_flag);
  return run_program("shardkit-train", with(args, {"--policy.path=" + pretrained, "--steps=2", "--batch_size=2"}));
}

}  // namespace

TEST_CASE("act: --policy.path at a checkpoint that does not fit the dataset is a clear error") {
  TempDir dir("sk-act-bad");
  const auto first = run_program("shardkit-train", with(act_flags(dir / "run"), {"--steps=2", "--batch_size=2"}));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  const fs::path saved = dir / "run/checkpoints/last/pretrained_model";

  {
    INFO("the folder as saved starts a run");
    const auto r = start_from(dir.path(), saved.string());
    INFO(r.output);
    CHECK(r.exit_code == 0);
  }
  {
    INFO("a checkpoint of another policy type");
    const auto other = edited_copy(saved, dir / "diffusion", [](json::object& c) { c["type"] = "diffusion"; });
    const auto r = start_from(dir.path(), other);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "this checkpoint is a 'diffusion' policy, and no plugin of that name is loaded"));
    const auto typed = start_from(dir.path(), other, "--policy.type=act");
    INFO(typed.output);
    CHECK(typed.exit_code == 2);
    CHECK(contains(typed.output, "--policy.type=act, but --policy.path=" + other + " holds a 'diffusion' policy"));
  }
  {
    INFO("a camera the dataset does not have");
    const auto other = edited_copy(saved, dir / "wrist", [](json::object& c) {
      c["input_features"].as_object()["observation.images.wrist"] = {{"type", "VISUAL"}, {"shape", {3, 96, 128}}};
    });
    const auto r = start_from(dir.path(), other);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "the saved policy reads 'observation.images.wrist' [3, 96, 128], which dataset "
                             "'lerobot' does not have (it has action, observation.images.top, observation.state)"));
  }
  {
    INFO("another state size");
    const auto other = edited_copy(saved, dir / "state7", [](json::object& c) {
      c["input_features"].as_object()["observation.state"].as_object()["shape"] = {7};
    });
    const auto r = start_from(dir.path(), other);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "'observation.state' has shape [7] in the saved policy's config.json and [6] in "
                             "dataset 'lerobot'"));
  }
  {
    INFO("a damaged normalizer file");
    fs::copy(saved, dir / "damaged", fs::copy_options::recursive);
    fs::path normalizer;
    for (const auto& e : fs::directory_iterator(dir / "damaged"))
      if (contains(e.path().filename().string(), "preprocessor_step_") && e.path().extension() == ".safetensors")
        normalizer = e.path();
    REQUIRE_FALSE(normalizer.empty());
    fs::resize_file(normalizer, fs::file_size(normalizer) / 2);
    const auto r = start_from(dir.path(), dir / "damaged");
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.output, normalizer.filename().string()));
    CHECK_FALSE(contains(r.output, "terminate called"));
  }
}
