// Parquet files through Arrow C++ (the pyarrow wheel's SDK): whole tables and typed columns.
#include "parquet_file.hpp"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/exception.h>

#include <filesystem>
#include <numeric>

#include <shardkit/error.hpp>

#include "../parquet_claims.hpp"

namespace shardkit::lerobot {
namespace {

template <class T>
T value_or_throw(arrow::Result<T> result, const std::string& what) {
  if (!result.ok()) throw FormatError(what + ": " + result.status().ToString());
  return std::move(result).ValueUnsafe();
}

// A primitive (non-nested) array as a 1-D tensor of its own type.
at::Tensor primitive_tensor(const arrow::Array& array, const std::string& where) {
  const auto n = array.length();
  auto copy = [&](auto tag, at::ScalarType type) {
    using T = decltype(tag);
    const auto& typed = static_cast<const arrow::NumericArray<typename arrow::CTypeTraits<T>::ArrowType>&>(array);
    auto t = at::empty({n}, type);
    std::copy_n(typed.raw_values(), n, t.template data_ptr<T>());
    return t;
  };
  switch (array.type_id()) {
    case arrow::Type::FLOAT: return copy(float{}, at::kFloat);
    case arrow::Type::DOUBLE: return copy(double{}, at::kDouble);
    case arrow::Type::INT64: return copy(std::int64_t{}, at::kLong);
    case arrow::Type::INT32: return copy(std::int32_t{}, at::kInt);
    case arrow::Type::INT16: return copy(std::int16_t{}, at::kShort);
    case arrow::Type::INT8: return copy(std::int8_t{}, at::kChar);
    case arrow::Type::UINT8: return copy(std::uint8_t{}, at::kByte);
    case arrow::Type::BOOL: {
      const auto& typed = static_cast<const arrow::BooleanArray&>(array);
      auto t = at::empty({n}, at::kBool);
      auto* out = t.data_ptr<bool>();
      for (std::int64_t i = 0; i < n; ++i) out[i] = typed.Value(i);
      return t;
    }
    default:
      throw FormatError(where + " holds values of type " + array.type()->ToString() +
                        ", which shardkit does not read as a tensor");
  }
}

// Flattens (fixed-size) lists down to their values, checking every list has `sizes[level]` items.
std::shared_ptr<arrow::Array> flatten_lists(std::shared_ptr<arrow::Array> array, const std::vector<std::int64_t>& sizes,
                                            const std::string& where) {
  for (std::size_t level = 0;; ++level) {
    if (array->null_count() > 0) throw FormatError(where + " has null values");
    const auto id = array->type_id();
    if (id != arrow::Type::FIXED_SIZE_LIST && id != arrow::Type::LIST && id != arrow::Type::LARGE_LIST) return array;
    if (level >= sizes.size()) throw FormatError(where + " is nested deeper than its shape in meta/info.json says");
    const auto rows = array->length();
    std::shared_ptr<arrow::Array> values;
    if (id == arrow::Type::FIXED_SIZE_LIST) {
      values = value_or_throw(static_cast<const arrow::FixedSizeListArray&>(*array).Flatten(), where);
    } else if (id == arrow::Type::LIST) {
      values = value_or_throw(static_cast<const arrow::ListArray&>(*array).Flatten(), where);
    } else {
      values = value_or_throw(static_cast<const arrow::LargeListArray&>(*array).Flatten(), where);
    }
    if (values->length() != rows * sizes[level])
      throw FormatError(where + " has lists of another size than its shape in meta/info.json (" +
                        std::to_string(sizes[level]) + ")");
    array = values;
  }
}

}  // namespace

ParquetTable::ParquetTable(const std::string& path) : path_(path) {
  if (!std::filesystem::exists(path))
    throw FormatError("missing file " + path + ": the dataset's metadata lists it; re-download the dataset "
                      "(the copy on disk is incomplete)");
  const std::string what = "cannot read the parquet file " + path +
                           " (truncated or corrupt? re-download the dataset)";
  try {
    auto file = value_or_throw(arrow::io::ReadableFile::Open(path), what);
    auto reader = value_or_throw(parquet::arrow::OpenFile(file, arrow::default_memory_pool()), what);
    datasets::check_parquet_claims(*reader->parquet_reader()->metadata(), value_or_throw(file->GetSize(), what), path);
    table_ = value_or_throw(reader->ReadTable(), what);
  } catch (const FormatError&) {
    throw;
  } catch (const std::exception& e) {  // parquet reports some corruption as ParquetException
    throw FormatError(what + ": " + e.what());
  }
}

std::int64_t ParquetTable::num_rows() const { return table_->num_rows(); }

bool ParquetTable::has_column(const std::string& name) const { return table_->GetColumnByName(name) != nullptr; }

const arrow::ChunkedArray& ParquetTable::column(const std::string& name) const {
  const auto column = table_->GetColumnByName(name);
  if (!column) throw FormatError(path_ + " has no column '" + name + "'");
  return *column;
}

std::vector<std::int64_t> ParquetTable::int64_column(const std::string& name) const {
  const auto t = tensor_column(name, {}, at::kLong);
  return {t.data_ptr<std::int64_t>(), t.data_ptr<std::int64_t>() + t.numel()};
}

std::vector<double> ParquetTable::double_column(const std::string& name) const {
  const auto t = tensor_column(name, {}, at::kDouble);
  return {t.data_ptr<double>(), t.data_ptr<double>() + t.numel()};
}

std::vector<std::string> ParquetTable::string_column(const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& chunk : column(name).chunks()) {
    if (chunk->type_id() == arrow::Type::STRING) {
      const auto& s = static_cast<const arrow::StringArray&>(*chunk);
      for (std::int64_t i = 0; i < s.length(); ++i) out.push_back(s.GetString(i));
    } else if (chunk->type_id() == arrow::Type::LARGE_STRING) {
      const auto& s = static_cast<const arrow::LargeStringArray&>(*chunk);
      for (std::int64_t i = 0; i < s.length(); ++i) out.push_back(s.GetString(i));
    } else {
      throw FormatError(path_ + ": column '" + name + "' is " + chunk->type()->ToString() + ", not strings");
    }
  }
  return out;
}

std::vector<std::string> ParquetTable::first_string_column(const std::string& name) const {
  std::vector<std::string> out;
  const auto not_strings = [&](const arrow::Array& chunk) {
    return FormatError(path_ + ": column '" + name + "' is " + chunk.type()->ToString() + ", not lists of strings");
  };
  for (const auto& chunk : column(name).chunks()) {
    if (chunk->type_id() != arrow::Type::LIST) throw not_strings(*chunk);
    const auto& lists = static_cast<const arrow::ListArray&>(*chunk);
    if (lists.values()->type_id() != arrow::Type::STRING) throw not_strings(*chunk);
    const auto& strings = static_cast<const arrow::StringArray&>(*lists.values());
    for (std::int64_t i = 0; i < lists.length(); ++i)
      out.push_back(lists.IsNull(i) || lists.value_length(i) == 0 ? std::string()
                                                                  : strings.GetString(lists.value_offset(i)));
  }
  return out;
}

at::Tensor ParquetTable::tensor_column(const std::string& name, const std::vector<std::int64_t>& sample_shape,
                                       at::ScalarType dtype) const {
  const auto where = path_ + ", column '" + name + "'";
  std::vector<at::Tensor> parts;
  for (const auto& chunk : column(name).chunks())
    parts.push_back(primitive_tensor(*flatten_lists(chunk, sample_shape, where), where).to(dtype));
  std::vector<std::int64_t> shape{num_rows()};
  shape.insert(shape.end(), sample_shape.begin(), sample_shape.end());
  if (parts.empty()) return at::empty(shape, dtype);
  return at::cat(parts).reshape(shape);
}

std::vector<std::string> ParquetTable::image_bytes_column(const std::string& name) const {
  const auto where = path_ + ", image column '" + name + "'";
  std::vector<std::string> out;
  for (const auto& chunk : column(name).chunks()) {
    if (chunk->type_id() != arrow::Type::STRUCT)
      throw FormatError(where + " is " + chunk->type()->ToString() + ", not LeRobot's struct<bytes, path>");
    const auto bytes = static_cast<const arrow::StructArray&>(*chunk).GetFieldByName("bytes");
    if (!bytes || bytes->type_id() != arrow::Type::BINARY)
      throw FormatError(where + " has no binary field 'bytes'");
    const auto& binary = static_cast<const arrow::BinaryArray&>(*bytes);
    for (std::int64_t i = 0; i < binary.length(); ++i) {
      if (binary.IsNull(i)) throw FormatError(where + ": row " + std::to_string(out.size()) + " has no image bytes");
      out.push_back(binary.GetString(i));
    }
  }
  return out;
}

at::ScalarType scalar_type_of(const std::string& dtype, const std::string& feature) {
  if (dtype == "float32") return at::kFloat;
  if (dtype == "float64") return at::kDouble;
  if (dtype == "int64") return at::kLong;
  if (dtype == "int32") return at::kInt;
  if (dtype == "int16") return at::kShort;
  if (dtype == "int8") return at::kChar;
  if (dtype == "uint8") return at::kByte;
  if (dtype == "bool") return at::kBool;
  throw FormatError("feature '" + feature + "' has dtype \"" + dtype + "\", which shardkit does not read");
}

}  // namespace shardkit::lerobot
