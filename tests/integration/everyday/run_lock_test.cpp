// A run folder belongs to one run; a failed start leaves no folder behind.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "../distributed/launch.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

std::string train_command(const std::vector<std::string>& args) {
  std::string cmd = shell_quote(bin("shardkit-train"));
  for (const auto& a : args) cmd += " " + shell_quote(a);
  return cmd;
}

}  // namespace

TEST_CASE("a second run into a folder in use is refused, naming the holder, and the first is untouched") {
  TempDir dir("sk-run-lock");
  // The first run is held at its 10th batch (the fixture dataset waits for a file), so it holds the
  // folder while the second one tries, however fast the machine is.
  const auto gate = dir / "release";
  const std::vector<std::string> flags = {"--steps=40", "--save_freq=20",
                                          "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/datasets",
                                          "--dataset.type=hold_fixture", "--dataset.hold_file=" + gate};
  auto held = flags;
  held.push_back("--dataset.hold_at=10");
  const auto solo = run_program("shardkit-train", tiny_run(dir / "solo", flags));
  INFO(solo.output);
  REQUIRE(solo.exit_code == 0);

  BackgroundProcess first(train_command(tiny_run(dir / "shared", held)));
  const bool holding = first.wait_for([&] { return fs::exists(gate + ".reached.rank0"); }, 300);
  INFO(first.output());
  REQUIRE(holding);
  const auto second = run_program("shardkit-train", tiny_run(dir / "shared", flags));
  std::ofstream(gate).close();  // releases the first run
  INFO(second.output);
  CHECK(second.exit_code == 2);
  CHECK(contains(second.output, "is in use by another run (process " + std::to_string(first.pid())));
  REQUIRE(first.wait(300));
  INFO(first.output());
  REQUIRE(first.exit_code() == 0);

  const auto a = read_metrics(dir / "solo");
  const auto b = read_metrics(dir / "shared");
  REQUIRE(a.size() == 40);
  REQUIRE(b.size() == 40);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(b[i].step == a[i].step);
    CHECK(b[i].raw.at("loss") == a[i].raw.at("loss"));
  }
  for (const auto* step : {"000020", "000040"}) {
    const auto weights = std::string("/checkpoints/") + step + "/pretrained_model/model.safetensors";
    CHECK(slurp(dir / "shared" + weights) == slurp(dir / "solo" + weights));
  }

  SECTION("the lock of a finished (or killed) run does not block") {
    const auto resumed = run_program("shardkit-train", {"--resume=true", "--output_dir=" + (dir / "shared"),
                                                        "--steps=50"});
    INFO(resumed.output);
    CHECK(resumed.exit_code == 0);
  }
}

TEST_CASE("a failed start leaves no folder behind") {
  TempDir dir("sk-failed-start");
  const auto small = run_program("shardkit-train", tiny_run(dir / "small", {"--steps=10", "--save_freq=10"}));
  INFO(small.output);
  REQUIRE(small.exit_code == 0);
  const auto model = dir / "small/checkpoints/000010/pretrained_model";

  // Weights that are missing: found only once the run is being built.
  fs::copy(model, dir / "no-weights");
  fs::remove(dir / "no-weights/model.safetensors");
  const auto bad = run_program("shardkit-train", tiny_run(dir / "out/run", {"--steps=10",
                                                          "--policy.path=" + (dir / "no-weights")}));
  INFO(bad.output);
  CHECK(bad.exit_code != 0);
  CHECK_FALSE(fs::exists(dir / "out"));

  // A shape mismatch is found only after the model is built.
  const auto mismatch = run_program("shardkit-train", tiny_run(dir / "wide", {
      "--steps=10", "--policy.path=" + model, "--policy.hidden_dim=64"}));
  INFO(mismatch.output);
  CHECK(mismatch.exit_code != 0);
  CHECK_FALSE(fs::exists(dir / "wide"));

  // Two processes leave without running destructors (a peer may be gone): rank 0 still
  // removes what the failed start made, the folder or, in a folder that existed, the lock.
  const auto two = launch(2, tiny_run(dir / "two/run", {"--steps=10", "--policy.path=" + (dir / "no-weights")}));
  INFO(two.output);
  CHECK(two.exit_code != 0);
  CHECK(contains(two.output, "model"));
  CHECK_FALSE(fs::exists(dir / "two"));
  fs::create_directories(dir / "existing");
  const auto into = launch(2, tiny_run(dir / "existing", {"--steps=10", "--policy.path=" + (dir / "no-weights")}));
  INFO(into.output);
  CHECK(into.exit_code != 0);
  CHECK(fs::is_empty(dir / "existing"));
}
