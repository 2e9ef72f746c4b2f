// The frames of the selected episodes, read from the data parquet files into memory.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/ATen.h>

#include "dataset_info.hpp"
#include "episode_table.hpp"

namespace shardkit::lerobot {

/// Every non-video feature of the selected episodes' frames, one row per frame, rows in
/// episode order. Column features are tensors [rows, *sample_shape]; image features are the
/// PNG (or other still-image) bytes of each row, decoded on demand.
class FrameTable {
 public:
  /// Reads the data files holding `episodes` (each file once). Throws FormatError naming the
  /// file for a missing or corrupt file, a missing column, or rows the episodes table promises
  /// but the file lacks.
  FrameTable(const DatasetInfo& info, const std::map<std::int64_t, Episode>& all_episodes,
             const std::vector<std::int64_t>& episodes);

  std::int64_t num_rows() const { return num_rows_; }
  /// The row holding global frame index `index` (the parquet's `index` column).
  std::int64_t row_of(std::int64_t index) const;
  const at::Tensor& column(const std::string& name) const { return columns_.at(name); }
  const std::map<std::string, at::Tensor>& columns() const { return columns_; }
  const std::string& image_bytes(const std::string& name, std::int64_t row) const {
    return images_.at(name)[static_cast<std::size_t>(row)];
  }

 private:
  std::int64_t num_rows_ = 0;
  std::map<std::string, at::Tensor> columns_;
  std::map<std::string, std::vector<std::string>> images_;
  std::unordered_map<std::int64_t, std::int64_t> row_of_index_;
};

}  // namespace shardkit::lerobot
