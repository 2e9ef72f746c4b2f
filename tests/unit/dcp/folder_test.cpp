// DCP folders on one process: a tensor saved in two chunks reassembles into any box; bad chunk maps are refused.
#include <torch/torch.h>
#undef CHECK

#include <catch2/catch.hpp>

#include <filesystem>

#include "shardkit/dcp/folder.hpp"
#include "shardkit/files.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
namespace dcp = shardkit::dcp;

namespace {

// A 4 x 3 tensor saved as two dim-0 chunks (rows 0-1, rows 2-3), as two shards would be.
std::string save_two_chunks(const shardkit::test::TempDir& tmp, const torch::Tensor& full) {
  shardkit::ShardedState state;
  shardkit::ShardLayout layout;
  layout.global_shape = {4, 3};
  layout.chunks = {{{{0, 0}, {2, 3}}, 0}, {{{2, 0}, {2, 3}}, 6}};
  state.add("model.w", full.clone(), layout, shardkit::Replicas::none());
  const auto dir = tmp / "folder";
  dcp::save_folder(state, "model.", dir, nullptr);
  return dir;
}

std::string load_error(const std::string& dir) {
  shardkit::ShardedState wanted;
  wanted.add("model.w", torch::zeros({4, 3}), shardkit::ShardLayout::whole({4, 3}), shardkit::Replicas::none());
  try {
    dcp::load_folder(wanted, "model.", dir);
  } catch (const shardkit::FormatError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a box is assembled from the saved chunks that overlap it", "[dcp][folder]") {
  shardkit::test::TempDir tmp("sk-dcp-folder");
  const auto full = torch::arange(12, torch::kFloat).reshape({4, 3});
  const auto dir = save_two_chunks(tmp, full);
  const auto meta = dcp::FolderReader(dir).metadata();
  const auto& entry = std::get<dcp::TensorStorageMetadata>(*meta.find("model.w"));
  REQUIRE(entry.chunks.size() == 2);
  // Rows 1-2 straddle the two saved chunks.
  auto middle = torch::zeros({2, 3});
  shardkit::ShardedState wanted;
  shardkit::ShardLayout layout;
  layout.global_shape = {4, 3};
  layout.chunks = {{{{1, 0}, {2, 3}}, 0}};
  wanted.add("model.w", middle, layout, shardkit::Replicas::none());
  dcp::load_folder(wanted, "model.", dir);
  CHECK(torch::equal(middle, full.narrow(0, 1, 2)));
}

TEST_CASE("saved chunks that overlap or leave holes are refused", "[dcp][folder]") {
  shardkit::test::TempDir tmp("sk-dcp-chunks");
  const auto dir = save_two_chunks(tmp, torch::arange(12, torch::kFloat).reshape({4, 3}));
  const auto meta_path = dir + "/.metadata";
  const auto original = dcp::FolderReader(dir).metadata();

  // Holes: the second chunk dropped from the map.
  auto holes = original;
  std::get<dcp::TensorStorageMetadata>(holes.state_dict_metadata[0].second).chunks.pop_back();
  shardkit::write_text_file(meta_path, dcp::write_metadata(holes));
  CHECK_THAT(load_error(dir), Catch::Contains("cover 6 of the 12 elements") && Catch::Contains("leave holes"));

  // Overlap: the second chunk claims rows 1-2 (and its storage entry follows it).
  auto overlap = original;
  std::get<dcp::TensorStorageMetadata>(overlap.state_dict_metadata[0].second).chunks[1].offsets = {1, 0};
  (*overlap.storage_data)[1].first.offset = std::vector<std::int64_t>{1, 0};
  shardkit::write_text_file(meta_path, dcp::write_metadata(overlap));
  CHECK_THAT(load_error(dir), Catch::Contains("overlap; the metadata is inconsistent"));

  // A wanted entry the folder does not have.
  shardkit::write_text_file(meta_path, dcp::write_metadata(original));
  shardkit::ShardedState other;
  other.add("model.missing", torch::zeros({2}), shardkit::ShardLayout::whole({2}), shardkit::Replicas::none());
  CHECK_THROWS_WITH(dcp::load_folder(other, "model.", dir), Catch::Contains("has no entry 'model.missing'"));
}

TEST_CASE("a data file cut at any length is refused, never a crash", "[dcp][folder]") {
  shardkit::test::TempDir tmp("sk-dcp-cut");
  const auto dir = save_two_chunks(tmp, torch::arange(12, torch::kFloat).reshape({4, 3}));
  const auto data = dir + "/" + dcp::data_file_name(0);
  const auto whole = shardkit::read_text_file(data);
  REQUIRE(load_error(dir).empty());
  // Every length up to the end of the first item, then a sparser walk over the rest.
  for (std::size_t length = 0; length < whole.size(); length += length < 1700 ? 1 : 37) {
    shardkit::write_text_file(data, whole.substr(0, length));
    const auto error = load_error(dir);
    INFO("cut at " << length << " of " << whole.size() << " bytes");
    CHECK_THAT(error, Catch::Contains("__0_0.distcp"));
  }
  // Bytes flipped inside the first item's blob: refused or, where only tensor data changed,
  // loaded; never a crash.
  for (std::size_t at = 0; at < 1600; at += 13) {
    auto damaged = whole;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x5a);
    shardkit::write_text_file(data, damaged);
    (void)load_error(dir);
  }
}
