// Parquet files through Arrow C++: whole tables, and columns as vectors or tensors, errors naming the file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace arrow {
class Table;
class ChunkedArray;
}  // namespace arrow

namespace shardkit::lerobot {

/// A parquet file read whole into memory.
class ParquetTable {
 public:
  /// Reads `path`. Throws FormatError naming the file when it is missing, truncated or not
  /// parquet, with what to do about it.
  explicit ParquetTable(const std::string& path);

  const std::string& path() const { return path_; }
  std::int64_t num_rows() const;
  bool has_column(const std::string& name) const;
  /// The column `name`, or a FormatError naming the file and the column.
  const arrow::ChunkedArray& column(const std::string& name) const;

  /// Integer column (int64/int32) as int64 values.
  std::vector<std::int64_t> int64_column(const std::string& name) const;
  /// Floating-point column (float/double) as doubles.
  std::vector<double> double_column(const std::string& name) const;
  std::vector<std::string> string_column(const std::string& name) const;
  /// A list<string> column: each row's first string ("" for an empty or null list).
  std::vector<std::string> first_string_column(const std::string& name) const;
  /// A numeric column, scalar or (nested) fixed-size lists, as a tensor [rows, *sample_shape]
  /// of `dtype`. Throws FormatError when values are null or the list sizes do not match.
  at::Tensor tensor_column(const std::string& name, const std::vector<std::int64_t>& sample_shape,
                           at::ScalarType dtype) const;
  /// A struct<bytes: binary, ...> column (LeRobot's images) as one byte string per row.
  std::vector<std::string> image_bytes_column(const std::string& name) const;

 private:
  std::string path_;
  std::shared_ptr<arrow::Table> table_;
};

/// The tensor dtype of a LeRobot dtype name ("float32", "int64", "bool", ...); throws
/// FormatError naming `feature` for one shardkit does not read.
at::ScalarType scalar_type_of(const std::string& dtype, const std::string& feature);

}  // namespace shardkit::lerobot
