// Asynchronous checkpoint saves (--checkpoint.async_mode=async): they write what a synchronous
// save writes, in every format and under one process, ddp, fsdp and zero; training is unchanged by
// them; a run resumed from one continues exactly.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "../distributed/launch.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

/// Every file of checkpoint folder `dir` (relative path -> bytes) but those that record the
/// options themselves (the configuration, its provenance, the manifest that checksums them).
std::map<std::string, std::string> saved_files(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const auto name = fs::relative(e.path(), dir).string();
    if (name == "manifest.json" || name.rfind("pretrained_model/train_config", 0) == 0) continue;
    std::ifstream in(e.path(), std::ios::binary);
    files[name] = {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  return files;
}

struct Case {
  std::string backend, format;
  int nproc;
};

}  // namespace

TEST_CASE("asynchronous saves write what synchronous ones write, and resume exactly", "[checkpoint][async]") {
  const Case cases[] = {{"single", "safetensors", 1}, {"fsdp", "dcp", 2}, {"ddp", "safetensors_dcp", 2}, {"zero", "dcp", 2}};
  for (const auto& c : cases) {
    INFO(c.backend << " / " << c.format);
    TempDir dir("sk-async-save");
    const auto args = [&](const std::string& out, const std::string& mode) {
      return tiny_run(out, {"--steps=6", "--save_freq=2", "--batch_size=4", "--distributed_backend=" + c.backend,
                            "--checkpoint_format=" + c.format, "--checkpoint.async_mode=" + mode});
    };
    // Both runs write into one folder, moved aside after each: DCP's .metadata records it.
    const auto sync = launch(c.nproc, args(dir / "run", "disabled"));
    INFO(sync.output);
    REQUIRE(sync.exit_code == 0);
    fs::rename(dir / "run", dir / "synch");
    const auto async = launch(c.nproc, args(dir / "run", "async"));
    INFO(async.output);
    REQUIRE(async.exit_code == 0);
    fs::rename(dir / "run", dir / "async");
    CHECK(contains(async.output, "written in the background"));
    CHECK(contains(async.output, "state copied to host buffers"));
    CHECK_FALSE(contains(sync.output, "written in the background"));

    CHECK(losses(dir / "async") == losses(dir / "synch"));
    for (const auto* step : {"000002", "000004", "000006"}) {
      INFO("checkpoint " << step);
      const auto want = saved_files(fs::path(dir / "synch") / "checkpoints" / step);
      const auto got = saved_files(fs::path(dir / "async") / "checkpoints" / step);
      REQUIRE(want.size() > 3);
      CHECK(got.size() == want.size());
      for (const auto& [name, bytes] : want) {
        INFO(name);
        REQUIRE(got.count(name) == 1);
        CHECK(got.at(name) == bytes);
      }
    }
    CHECK(fs::read_symlink(fs::path(dir / "async") / "checkpoints" / "last") == "000006");

    roll_back_copy(dir / "async", dir / "resumed", "000002");
    const auto resumed = launch(c.nproc, {"--resume=true", "--output_dir=" + (dir / "resumed")});
    INFO(resumed.output);
    REQUIRE(resumed.exit_code == 0);
    CHECK(contains(resumed.output, "at step 2"));
    const auto a = read_metrics(dir / "synch");
    const auto b = read_metrics(dir / "resumed");
    REQUIRE(a.size() == 6);
    REQUIRE(b.size() == 6);
    for (std::size_t i = 2; i < 6; ++i) CHECK(b[i].raw.at("loss") == a[i].raw.at("loss"));  // bit for bit
  }
}

TEST_CASE("--dry_run counts the host copy of asynchronous saves as large as the runs make it", "[checkpoint][async]") {
  // The text between `mark` and `end` in `text` ("" when absent).
  const auto between = [](const std::string& text, const std::string& mark, const std::string& end) {
    const auto at = text.find(mark);
    if (at == std::string::npos) return std::string();
    const auto from = at + mark.size();
    return text.substr(from, text.find(end, from) - from);
  };
  for (const auto& [backend, nproc] : {std::pair<std::string, int>{"single", 1}, {"fsdp", 2}}) {
    INFO(backend);
    TempDir dir("sk-async-dry");
    const auto flags = tiny_run(dir / "run", {"--steps=2", "--save_freq=2", "--checkpoint.async_mode=async",
                                              "--distributed_backend=" + backend,
                                              "--parallelism.dp_shard=" + std::to_string(nproc)});
    const auto plan = run_program("shardkit-train", with(flags, {"--dry_run=true"}));
    INFO(plan.output);
    REQUIRE(plan.exit_code == 0);
    // "...: 53.8 KiB per rank (55120 bytes)" and "host buffers (53.9 KiB, 55184 bytes on this rank)"
    const auto planned = between(between(plan.output, "adds the host copy of what a save writes: ", ")"), "(", " bytes");
    const auto run = launch(nproc, flags);
    INFO(run.output);
    REQUIRE(run.exit_code == 0);
    const auto copied = between(run.output, "state copied to host buffers (", " bytes on this rank)");
    REQUIRE_FALSE(planned.empty());
    REQUIRE(copied.find(", ") != std::string::npos);
    const double want = std::stod(copied.substr(copied.find(", ") + 2));
    // Rank 0's copy; the plan counts fsdp's padded flat shards, the copy the parameters' own pieces.
    CHECK(std::stod(planned) == Approx(want).epsilon(0.01));
  }
}
