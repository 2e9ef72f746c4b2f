// meta/tasks.parquet: the task text of each task_index.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace shardkit::lerobot {

/// task_index -> task text. Throws FormatError naming the file when it is missing or malformed.
std::map<std::int64_t, std::string> read_tasks(const std::string& root);

}  // namespace shardkit::lerobot
