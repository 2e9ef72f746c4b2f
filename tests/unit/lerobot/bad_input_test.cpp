// Bad datasets and bad requests: each gives one clear error naming the path and what to do.
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include "lerobot_test_util.hpp"

using namespace shardkit::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {
const std::string kData = "data/chunk-000/file-000.parquet";
const std::string kVideo = "videos/observation.images.top/chunk-000/file-000.mp4";
const std::string kEpisodes = "meta/episodes/chunk-000/file-000.parquet";

/// The error reading every sample of the dataset in `root` (with the reference's deltas) throws.
std::string read_all_error(const std::string& root) {
  try {
    auto dataset = open_lerobot({{"root", root}});
    dataset->set_delta_indices(reference_deltas());
    for (std::int64_t i = 0; i < dataset->size(); ++i) dataset->get_batch({i});
  } catch (const shardkit::Error& e) {
    return e.what();
  }
  return "";
}

/// Runs a pyarrow snippet on the episodes table of `root` (`t` in, `t` out).
void rewrite_episodes(const std::string& root, const std::string& change) {
  const auto path = root + "/" + kEpisodes;
  const auto script = "import pyarrow as pa, pyarrow.parquet as pq, pyarrow.compute as pc\n"
                      "t = pq.read_table('" + path + "')\n" + change + "\npq.write_table(t, '" + path + "')\n";
  const auto result = run_command(python() + " -c " + shell_quote(script));
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
}

/// Moves each episode's start in the mp4 (from_timestamp) by `shifts` seconds, e.g. "[0.0, 0.0, 1.0]".
void shift_video_starts(const std::string& root, const std::string& shifts) {
  rewrite_episodes(root, "c = 'videos/observation.images.top/from_timestamp'\n"
                         "t = t.set_column(t.schema.get_field_index(c), c, pc.add(t[c], pa.array(" + shifts + ")))");
}
}  // namespace

TEST_CASE("a folder without meta/info.json is not a LeRobot dataset", "[lerobot][bad]") {
  TempDir dir("sk-lerobot-bad");
  const auto root = copy_tiny("video", dir);
  fs::remove(root + "/meta/info.json");
  CHECK_THAT(open_error({{"root", root}}), Contains(root + "/meta/info.json") && Contains("not a LeRobot dataset"));
}

TEST_CASE("another codebase_version is refused, naming LeRobot's converter", "[lerobot][bad]") {
  TempDir dir("sk-lerobot-bad");
  const auto root = copy_tiny("video", dir);
  edit_file(root + "/meta/info.json", "\"v3.0\"", "\"v2.1\"");
  CHECK_THAT(open_error({{"root", root}}),
             Contains("\"v2.1\"") && Contains("info.json") && Contains("convert_dataset_v21_to_v30"));
  edit_file(root + "/meta/info.json", "\"v2.1\"", "{");
  CHECK_THAT(open_error({{"root", root}}), Contains("info.json is not valid JSON"));
}

TEST_CASE("a truncated or corrupt parquet file names the file", "[lerobot][bad]") {
  TempDir dir("sk-lerobot-bad");
  const auto root = copy_tiny("image", dir);
  truncate_file(root + "/" + kData, 0.5);
  CHECK_THAT(open_error({{"root", root}}), Contains(root + "/" + kData) && Contains("truncated or corrupt"));
  std::ofstream(root + "/meta/tasks.parquet", std::ios::trunc) << "not a parquet file at all";
  CHECK_THAT(open_error({{"root", root}}), Contains(root + "/meta/tasks.parquet") && Contains("re-download"));
}

TEST_CASE("a data file the episodes table lists but the disk lacks", "[lerobot][bad]") {
  TempDir dir("sk-lerobot-bad");
  const auto root = copy_tiny("video", dir);
  fs::remove(root + "/" + kData);
  CHECK_THAT(open_error({{"root", root}}), Contains("missing file " + root + "/" + kData) && Contains("re-download"));
  fs::remove_all(root + "/meta/episodes");
  CHECK_THAT(open_error({{"root", root}}), Contains(root + "/meta/episodes") && Contains("no episodes table"));
}

TEST_CASE("an episode whose row range is backwards or overflows is refused, naming the table", "[lerobot][bad]") {
  // Found by the lerobot_parquet fuzz target: to - from overflowed int64 before the check.
  TempDir dir("sk-lerobot-bad");
  const auto root = copy_tiny("video", dir);
  const auto set = [&](const std::string& column, const std::string& value) {
    rewrite_episodes(root, "c = '" + column + "'\n"
                           "t = t.set_column(t.schema.get_field_index(c), c, pa.array([" + value +
                           "] * t.num_rows, pa.int64()))");
  };
  set("dataset_from_index", "-1");
  set("dataset_to_index", "2**63 - 1");
  CHECK_THAT(open_error({{"root", root}}),
             Contains(root + "/" + kEpisodes) && Contains("rows [-1, 9223372036854775807)"));
  set("dataset_from_index", "5");
  set("dataset_to_index", "2");
  CHECK_THAT(open_error({{"root", root}}), Contains(root + "/" + kEpisodes) && Contains("rows [5, 2)"));
}

TEST_CASE("an empty, malformed or out-of-range episode list", "[lerobot][bad]") {
  const auto root = tiny_dataset("video");
  CHECK_THAT(open_error({{"root", root}, {"episodes", std::string("[]")}}),
             Contains("--dataset.episodes=[]") && Contains("selects no episode"));
  CHECK_THAT(open_error({{"root", root}, {"episodes", std::string("[0,x]")}}), Contains("'x' is not an episode index"));
  CHECK_THAT(open_error({{"root", root}, {"episodes", std::string("[7]")}}),
             Contains("has no episode 7") && Contains(root));
}

TEST_CASE("a truncated mp4 names the video", "[lerobot][bad]") {
  TempDir dir("sk-lerobot-bad");
  const auto root = copy_tiny("video", dir);
  truncate_file(root + "/" + kVideo, 0.6);
  CHECK_THAT(read_all_error(root), Contains(root + "/" + kVideo));
  fs::remove(root + "/" + kVideo);
  CHECK_THAT(read_all_error(root), Contains("missing video " + root + "/" + kVideo));
}

TEST_CASE("a video shorter than its episodes say names the file, episode and frame", "[lerobot][bad]") {
  TempDir dir("sk-lerobot-bad");
  const auto root = copy_tiny("video", dir);
  // Episode 2 said to start 1 s later in the mp4: its last second is past the end of the file.
  shift_video_starts(root, "[0.0, 0.0, 1.0]");
  CHECK_THAT(read_all_error(root), Contains(root + "/" + kVideo) && Contains("episode 2, frame 30") &&
                                       Contains("shorter than the episodes table says"));
}

TEST_CASE("a video frame off the expected time by more than tolerance_s is an error, never another frame",
          "[lerobot][bad]") {
  TempDir dir("sk-lerobot-bad");
  const auto root = copy_tiny("video", dir);
  shift_video_starts(root, "[0.0, 0.05, 0.0]");  // half a frame at 10 fps
  CHECK_THAT(read_all_error(root), Contains(root + "/" + kVideo) && Contains("episode 1, frame 0") &&
                                       Contains("no frame within"));
}

TEST_CASE("a camera of another resolution than info.json says", "[lerobot][bad]") {
  for (const std::string variant : {"video", "image"}) {
    TempDir dir("sk-lerobot-bad");
    const auto root = copy_tiny(variant, dir);
    edit_file(root + "/meta/info.json", "96,\n                128,", "64,\n                128,");
    const auto error = read_all_error(root);
    INFO(variant);
    CHECK_THAT(error, Contains("128x96 pixels, but meta/info.json says 128x64"));
    CHECK_THAT(error, Contains(variant == "video" ? root + "/" + kVideo : root + "/" + kData));
  }
}

TEST_CASE("a feature the policy needs but the dataset lacks names both", "[lerobot][bad]") {
  auto dataset = open_lerobot({{"root", tiny_dataset("image")}});
  try {
    dataset->set_delta_indices({{"observation.images.wrist", {0}}});
    FAIL("no error");
  } catch (const shardkit::ConfigError& e) {
    CHECK_THAT(e.what(), Contains("'observation.images.wrist'") && Contains(tiny_dataset("image")) &&
                             Contains("observation.images.top"));
  }
}

TEST_CASE("info.json paths that lead outside the dataset folder are refused before any file is opened",
          "[lerobot][bad]") {
  TempDir dir("sk-lerobot-bad");
  const auto root = copy_tiny("video", dir);
  const std::string data = "\"data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet\"";
  const std::string video = "\"videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4\"";
  for (const std::string bad : {"\"../../elsewhere/{chunk_index}-{file_index}.parquet\"",
                                "\"/etc/{chunk_index}-{file_index}.parquet\"",
                                "\"data/../../{chunk_index}/{file_index}.parquet\""}) {
    INFO(bad);
    edit_file(root + "/meta/info.json", data, bad);
    CHECK_THAT(open_error({{"root", root}}),
               Contains("\"data_path\" is '") && Contains("which leads outside the dataset folder"));
    edit_file(root + "/meta/info.json", bad, data);
  }
  edit_file(root + "/meta/info.json", video, "\"videos/../../{video_key}/{chunk_index}-{file_index}.mp4\"");
  CHECK_THAT(open_error({{"root", root}}), Contains("\"video_path\" is '"));
  edit_file(root + "/meta/info.json", "\"videos/../../{video_key}/{chunk_index}-{file_index}.mp4\"", video);
  // A video feature named to climb out of videos/.
  edit_file(root + "/meta/info.json", "\"observation.images.top\"", "\"../top\"");
  CHECK_THAT(open_error({{"root", root}}), Contains("feature '../top'") && Contains("leads outside it"));
}

TEST_CASE("info.json cannot size a sample or a file name beyond bounds", "[lerobot][bad][limits]") {
  TempDir dir("sk-lerobot-limits");
  const auto root = copy_tiny("video", dir);
  const std::string data = "\"data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet\"";
  // A state of 2^31 x 2^31 x 3 values per frame, from a few bytes of info.json.
  const auto info = slurp(root + "/meta/info.json");
  const auto state = info.find("\"observation.state\"");
  REQUIRE(state != std::string::npos);
  const auto shape = info.find("\"shape\"", state);
  const auto close = info.find(']', shape);
  std::ofstream(root + "/meta/info.json")
      << info.substr(0, shape) + "\"shape\": [2147483647, 2147483647, 3" + info.substr(close);
  CHECK_THAT(open_error({{"root", root}}),
             Contains("feature 'observation.state': \"shape\" [2147483647,2147483647,3] has more than 2^31 elements"));
  std::ofstream(root + "/meta/info.json") << info;
  edit_file(root + "/meta/info.json", data, "\"data/chunk-{chunk_index:099999999999d}/file-{file_index:03d}.parquet\"");
  CHECK_THAT(open_error({{"root", root}}), Contains("{chunk_index:099999999999d} is not a number format LeRobot writes"));
}
