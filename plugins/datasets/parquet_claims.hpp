// What a Parquet file's footer claims, checked against its size before Arrow sizes anything by it.
// Shared by the dataset plugins that read Parquet (lerobot, text); header-only, as both link Arrow.
#pragma once

#include <parquet/metadata.h>

#include <cstdint>
#include <string>

#include "shardkit/error.hpp"

namespace shardkit::datasets {

/// The most values (levels, one per row of a flat column) a file may claim per byte it holds,
/// beyond kParquetSlackValues. Real tables stay far below it: a table's incompressible columns
/// (floats, text) hold about a byte per value or more, and even a column of one repeated value
/// written by pyarrow (pages of 20,000 rows) takes about a byte per thousand values.
inline constexpr std::int64_t kParquetValuesPerByte = 4096;
inline constexpr std::int64_t kParquetSlackValues = std::int64_t{1} << 24;

/// Throws FormatError naming `path` when the footer's counts disagree (row groups against the file,
/// a row group's column chunks against the schema, a column chunk holding fewer values than its
/// row group's rows) or when it claims more values than a file of `file_size` bytes can hold
/// (kParquetValuesPerByte): Arrow would reserve memory for every claimed value before finding the
/// pages short (a 1 kB file claiming 7 billion rows made it allocate and clear gigabytes).
inline void check_parquet_claims(const parquet::FileMetaData& meta, std::int64_t file_size, const std::string& path) {
  const auto damaged = [&](const std::string& what) {
    return FormatError(path + ": " + what + "; the file is damaged or was not written as Parquet says (re-download it)");
  };
  const std::int64_t limit = kParquetValuesPerByte * file_size + kParquetSlackValues;
  std::int64_t rows = 0, values = 0;
  for (int g = 0; g < meta.num_row_groups(); ++g) {
    const auto group = meta.RowGroup(g);
    if (group->num_columns() != meta.num_columns())
      throw damaged("row group " + std::to_string(g) + " holds " + std::to_string(group->num_columns()) +
                    " column chunks, the schema " + std::to_string(meta.num_columns()) + " columns");
    const auto group_rows = group->num_rows();
    if (group_rows < 0 || group_rows > limit)
      throw damaged("row group " + std::to_string(g) + " claims " + std::to_string(group_rows) + " rows in a file of " +
                    std::to_string(file_size) + " bytes");
    rows += group_rows;
    if (rows > limit)
      throw damaged("the row groups claim more than " + std::to_string(limit) + " rows in a file of " +
                    std::to_string(file_size) + " bytes");
    for (int c = 0; c < group->num_columns(); ++c) {
      const auto chunk_values = group->ColumnChunk(c)->num_values();
      if (chunk_values < group_rows || chunk_values > limit)
        throw damaged("row group " + std::to_string(g) + " claims " + std::to_string(group_rows) + " rows, its column " +
                      std::to_string(c) + " " + std::to_string(chunk_values) + " values");
      values += chunk_values;
      if (values > limit)
        throw damaged("the footer claims more than " + std::to_string(limit) + " values in a file of " +
                      std::to_string(file_size) + " bytes");
    }
  }
  if (rows != meta.num_rows())
    throw damaged("the footer claims " + std::to_string(meta.num_rows()) + " rows, its row groups " +
                  std::to_string(rows));
}

}  // namespace shardkit::datasets
