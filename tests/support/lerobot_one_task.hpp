// The tiny LeRobot datasets of tests/data, and a copy whose three episodes share one task (--dataset.eval_split).
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "test_support.hpp"

namespace shardkit::test {

/// The tiny LeRobot v3.0 dataset `variant` ("video": AV1 mp4, or "image": PNG) LeRobot wrote.
inline std::string tiny_lerobot_dataset(const std::string& variant = "video") {
  return std::string(SHARDKIT_SOURCE_DIR) + "/tests/data/lerobot-tiny-v3/" + variant;
}

/// Copies tests/data/lerobot-tiny-v3/video to `<dir>/one-task` and rewrites its episodes table
/// (with pyarrow) so that all three episodes have the first task "push a block"; the frames
/// keep their own task_index 0, 1, 2. --dataset.eval_split=0.5 then holds out episodes 1 and 2.
/// Returns the copy's root.
inline std::string one_task_copy(const std::string& dir) {
  namespace fs = std::filesystem;
  const auto root = dir + "/one-task";
  fs::copy(tiny_lerobot_dataset("video"), root, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(root))
    fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
  const auto path = root + "/meta/episodes/chunk-000/file-000.parquet";
  const auto script = "import pyarrow as pa, pyarrow.parquet as pq\n"
                      "t = pq.read_table('" + path + "')\n"
                      "i = t.schema.get_field_index('tasks')\n"
                      "t = t.set_column(i, 'tasks', pa.array([['push a block']] * 3, pa.list_(pa.string())))\n"
                      "pq.write_table(t, '" + path + "')\n";
  const auto result = run_command(python() + " -c " + shell_quote(script));
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  return root;
}

}  // namespace shardkit::test
