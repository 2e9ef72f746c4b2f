// --save_total_limit's folder work: the newest checkpoints by step number stay, `last`'s target
// always stays, and only entries shardkit wrote count as its own.
#include "../../../apps/shardkit-train/src/checkpoint_limit.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "test_support.hpp"

using namespace shardkit::train;
namespace fs = std::filesystem;

namespace {

std::set<std::string> entries(const std::string& folder) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) names.insert(e.path().filename().string());
  return names;
}

}  // namespace

TEST_CASE("--save_total_limit keeps the newest checkpoints by step and the one last points to", "[train][checkpoint]") {
  shardkit::test::TempDir dir("sk-ckpt-limit");
  const auto root = dir / "checkpoints";
  for (const auto* step : {"000004", "000008", "000012", "1000000"}) fs::create_directories(root + "/" + step);
  fs::create_directory_symlink("000008", root + "/last");  // a run resumed from 000008, say
  fs::create_directories(root + "/.tmp-000016");
  CHECK(foreign_checkpoint_entries(root).empty());

  // By number, 1000000 is the newest (a text sort would put it first); 000008 is last's.
  CHECK(remove_old_checkpoints(root, 2) == std::vector<std::string>{"000004"});
  CHECK(entries(root) == std::set<std::string>{"000008", "000012", "1000000", "last", ".tmp-000016"});
  CHECK(remove_old_checkpoints(root, 1) == std::vector<std::string>{"000012"});
  CHECK(remove_old_checkpoints(root, 1).empty());
  CHECK(entries(root) == std::set<std::string>{"000008", "1000000", "last", ".tmp-000016"});

  std::ofstream(root + "/notes.txt") << "mine";
  fs::create_directories(root + "/best");
  CHECK(foreign_checkpoint_entries(root) == std::vector<std::string>{"best", "notes.txt"});
}
