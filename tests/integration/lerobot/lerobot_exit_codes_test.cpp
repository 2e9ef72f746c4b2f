// A LeRobot dataset folder that is the wrong one to name exits 2, a damaged one 1, in a real start
// and in a dry run alike (docs/cli.md#exit-codes; before issue 26 each gave 1 in a real start and 2
// under --dry_run=true, as the dataset is read after or before the trainer is built).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "../distributed/launch.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

/// A writable copy of the tiny image dataset in `to`, with `from` replaced by `by` in meta/info.json.
std::string edited_copy(const std::string& to, const std::string& from, const std::string& by) {
  fs::copy(std::string(SHARDKIT_SOURCE_DIR) + "/tests/data/lerobot-tiny-v3/image", to, fs::copy_options::recursive);
  const auto path = to + "/meta/info.json";
  auto text = slurp(path);
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), by);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return to;
}

}  // namespace

TEST_CASE("a LeRobot dataset folder that is not one, of another version, or damaged: one code per class",
          "[lerobot][errors]") {
  TempDir dir("sk-lerobot-exit");
  fs::create_directory(dir / "empty");
  struct Mistake {
    std::string name, root;
    int code;
    std::string message;
  };
  const std::vector<Mistake> mistakes = {
      {"a folder that is not a LeRobot dataset", dir / "empty", 2, "this folder is not a LeRobot dataset"},
      {"a dataset of another codebase_version", edited_copy(dir / "v21", "\"v3.0\"", "\"v2.1\""), 2,
       "convert_dataset_v21_to_v30"},
      {"a damaged meta/info.json", edited_copy(dir / "damaged", "\"codebase_version\"", "{"), 1,
       "info.json is not valid JSON"},
  };
  for (const auto& m : mistakes) {
    for (const bool dry_run : {false, true}) {
      std::vector<std::string> args = {"--output_dir=" + dir / "run", "--dataset.type=lerobot",
                                       "--dataset.root=" + m.root, "--policy.type=mlp", "--steps=2",
                                       "--num_threads=1"};
      if (dry_run) args.push_back("--dry_run=true");
      const auto r = run_program("shardkit-train", args);
      INFO(m.name << (dry_run ? ", --dry_run=true" : "") << " (expected exit " << m.code << ")\n" << r.output);
      CHECK(r.exit_code == m.code);
      CHECK(contains(r.output, m.message));
      CHECK_FALSE(fs::exists(dir / "run"));
    }
  }
}
