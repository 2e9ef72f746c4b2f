// Reading meta/tasks.parquet.
#include "task_table.hpp"

#include <filesystem>

#include <shardkit/error.hpp>

#include "parquet_file.hpp"

namespace shardkit::lerobot {

std::map<std::int64_t, std::string> read_tasks(const std::string& root) {
  const ParquetTable table((std::filesystem::path(root) / "meta" / "tasks.parquet").string());
  const auto index = table.int64_column("task_index");
  const auto text = table.string_column("task");
  std::map<std::int64_t, std::string> tasks;
  for (std::size_t i = 0; i < index.size(); ++i)
    if (!tasks.emplace(index[i], text[i]).second)
      throw FormatError(table.path() + " lists task_index " + std::to_string(index[i]) + " twice");
  return tasks;
}

}  // namespace shardkit::lerobot
