// Reading the data parquet files of the selected episodes: each file once, only the rows wanted.
#include "frame_table.hpp"

#include <shardkit/error.hpp>

#include "parquet_file.hpp"

namespace shardkit::lerobot {

FrameTable::FrameTable(const DatasetInfo& info, const std::map<std::int64_t, Episode>& all_episodes,
                       const std::vector<std::int64_t>& episodes) {
  // Episodes grouped by the data file holding them, files in (chunk, file) order.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const Episode*>> by_file;
  for (const auto e : episodes) {
    const auto& ep = all_episodes.at(e);
    by_file[{ep.data_chunk, ep.data_file}].push_back(&ep);
  }
  std::map<std::string, std::vector<at::Tensor>> parts;
  for (const auto& [where, file_episodes] : by_file) {
    const ParquetTable table(info.data_file(where.first, where.second));
    const auto index = table.int64_column("index");
    std::unordered_map<std::int64_t, std::int64_t> row_in_file;
    for (std::size_t r = 0; r < index.size(); ++r) row_in_file[index[r]] = static_cast<std::int64_t>(r);
    std::vector<std::int64_t> rows;
    for (const auto* ep : file_episodes) {
      for (auto i = ep->from_index; i < ep->to_index; ++i) {
        const auto it = row_in_file.find(i);
        if (it == row_in_file.end())
          throw FormatError(table.path() + " lacks frame " + std::to_string(i) + " of episode " +
                            std::to_string(ep->index) + " (the episodes table says rows [" +
                            std::to_string(ep->from_index) + ", " + std::to_string(ep->to_index) +
                            ") are there); the dataset is incomplete: re-download it");
        row_of_index_[i] = num_rows_ + static_cast<std::int64_t>(rows.size());
        rows.push_back(it->second);
      }
    }
    const auto selected = at::tensor(rows, at::kLong);
    for (const auto& f : info.features) {
      if (f.storage == Storage::Video) continue;
      if (f.storage == Storage::Image) {
        const auto bytes = table.image_bytes_column(f.name);
        auto& out = images_[f.name];
        for (const auto r : rows) out.push_back(bytes[static_cast<std::size_t>(r)]);
        continue;
      }
      parts[f.name].push_back(
          table.tensor_column(f.name, f.sample_shape(), scalar_type_of(f.dtype, f.name)).index_select(0, selected));
    }
    num_rows_ += static_cast<std::int64_t>(rows.size());
  }
  for (auto& [name, tensors] : parts) columns_[name] = at::cat(tensors);
}

std::int64_t FrameTable::row_of(std::int64_t index) const {
  const auto it = row_of_index_.find(index);
  if (it == row_of_index_.end())
    throw RuntimeError("frame index " + std::to_string(index) + " is not among the selected episodes");
  return it->second;
}

}  // namespace shardkit::lerobot
