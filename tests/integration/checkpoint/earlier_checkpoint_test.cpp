// Checkpoints written before the trainer and the DCP machinery left the core (tests/data/
// checkpoints-before-core-split) still load, and their runs continue as they did then.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "../distributed/launch.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

TEST_CASE("checkpoints of every format written before the core split resume on their curve") {
  const std::string data = std::string(SHARDKIT_SOURCE_DIR) + "/tests/data/checkpoints-before-core-split";
  for (const std::string format : {"safetensors", "dcp", "safetensors_dcp"}) {
    SECTION(format) {
      TempDir dir("sk-earlier-" + format);
      // The run folder as it was left at step 4 of 8; expected_metrics.jsonl is what that run
      // logged for all 8 steps.
      fs::copy(data + "/" + format, dir / "run", fs::copy_options::recursive | fs::copy_options::copy_symlinks);
      fs::create_directory(dir / "expected");
      fs::copy_file(data + "/" + format + "/expected_metrics.jsonl", dir / "expected/metrics.jsonl");
      const auto r = launch(2, {"--resume=true", "--output_dir=" + (dir / "run")});
      INFO(r.output);
      REQUIRE(r.exit_code == 0);
      CHECK(contains(r.output, "resumed from"));
      const auto expected = read_metrics(dir / "expected");
      const auto resumed = read_metrics(dir / "run");
      REQUIRE(expected.size() == 8);
      REQUIRE(resumed.size() == 8);
      for (std::size_t i = 4; i < 8; ++i) {
        CHECK(resumed[i].step == expected[i].step);
        // Bit for bit on the machine that wrote them; 1e-6 leaves room for another CPU's kernels.
        CHECK(resumed[i].number("loss") == Approx(expected[i].number("loss")).epsilon(1e-6));
        CHECK(resumed[i].number("grad_norm") == Approx(expected[i].number("grad_norm")).epsilon(1e-6));
      }
    }
  }
}
