// Fuzz target for the Parquet tables of a LeRobot dataset, read through the dataset plugin's own
// readers: one input as meta/tasks.parquet, as the episodes table (of the dataset with a video
// camera, whose table also says where each episode's frames are in the mp4s) and as the data
// table (of the dataset with an image camera: numeric columns as tensors, PNG bytes per row); the
// episodes an input's table accepts are then looked up in the real data table. None crashes or
// lets anything but shardkit's errors escape, and every table of frames holds one row per frame.
//
// Built and run by scripts/fuzz.sh (libFuzzer with ASan and UBSan; Arrow/Parquet are the pyarrow
// wheel's prebuilt libraries: a crash inside the decoder is caught, but the fuzzer is guided by
// shardkit's code only); the test suite replays the committed corpus through the same function.
// SHARDKIT_TINY_DATASETS names tests/data/lerobot-tiny-v3, copied into the process's temporary folder.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "dataset_info.hpp"
#include "episode_table.hpp"
#include "frame_table.hpp"
#include "refuse_or_abort.hpp"
#include "task_table.hpp"
#include "temp_folder.hpp"

namespace {
namespace fs = std::filesystem;
using namespace shardkit::lerobot;

// A copy of one tiny dataset whose file `relative` the fuzzer's input replaces.
struct Copy {
  std::string name;  // its folder under the temporary folder
  std::string root;
  std::string target;
  DatasetInfo info;
  std::map<std::int64_t, Episode> episodes;  // read from the copy before any input replaced its files

  Copy(const std::string& dataset, const std::string& folder, const std::string& relative) : name(folder) {
    root = (shardkit::fuzz::temp_folder() / name).string();
    fs::copy(fs::path(SHARDKIT_TINY_DATASETS) / dataset, root, fs::copy_options::recursive);
    target = relative;
    info = read_dataset_info(root);
    episodes = read_episodes(info);
  }
  void replace(std::string_view bytes) const { shardkit::fuzz::write_temp_file(name + "/" + target, bytes); }
};

struct Copies {
  Copy tasks{"image", "tasks", "meta/tasks.parquet"};
  Copy episodes{"video", "episodes", "meta/episodes/chunk-000/file-000.parquet"};
  Copy data{"image", "data", "data/chunk-000/file-000.parquet"};
};

const Copies& copies() {
  static const Copies all;
  return all;
}

// Reads the frames of every episode in `episodes`; the table must hold one row per frame.
void read_frames(const DatasetInfo& info, const std::map<std::int64_t, Episode>& episodes) {
  std::vector<std::int64_t> all;
  std::int64_t frames = 0;
  bool counted = true;  // lengths up to 2^63 - 1 each: their sum may not fit
  for (const auto& [index, e] : episodes) {
    all.push_back(index);
    counted = counted && !__builtin_add_overflow(frames, e.length, &frames);
  }
  const FrameTable table(info, episodes, all);
  if (counted && table.num_rows() != frames) std::abort();
  for (const auto& [name, column] : table.columns())
    if (column.size(0) != table.num_rows()) std::abort();
}

}  // namespace

// libFuzzer calls this once before any input: the copies are made here, not in the first input's time.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)copies();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto& c = copies();

  c.tasks.replace(bytes);
  shardkit::fuzz::refuse_or_abort("tasks.parquet", [&] { (void)read_tasks(c.tasks.root); });

  c.episodes.replace(bytes);
  shardkit::fuzz::refuse_or_abort("episodes parquet", [&] {
    const auto episodes = read_episodes(c.episodes.info);
    read_frames(c.episodes.info, episodes);  // the episodes' rows looked up in the real data table
  });

  c.data.replace(bytes);
  shardkit::fuzz::refuse_or_abort("data parquet", [&] { read_frames(c.data.info, c.data.episodes); });
  return 0;
}
