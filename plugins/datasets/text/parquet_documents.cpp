// .parquet text and conversation files through Arrow C++ (the pyarrow wheel's SDK): rows as records.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/exception.h>

#include <boost/json.hpp>

#include "../parquet_claims.hpp"
#include "documents.hpp"
#include "shardkit/error.hpp"

namespace shardkit::text {
namespace {

template <class T>
T value_or_throw(arrow::Result<T> result, const std::string& what) {
  if (!result.ok()) throw FormatError(what + ": " + result.status().ToString());
  return std::move(result).ValueUnsafe();
}

/// Whether json_of reads values of `type`.
bool readable(const arrow::DataType& type) {
  using arrow::Type;
  switch (type.id()) {
    case Type::STRING: case Type::LARGE_STRING: case Type::BOOL: case Type::INT64: case Type::INT32:
    case Type::DOUBLE: case Type::FLOAT: case Type::STRUCT: case Type::NA:
      return true;
    case Type::LIST: case Type::LARGE_LIST:
      return readable(*type.field(0)->type());
    case Type::DICTIONARY:
      return readable(*static_cast<const arrow::DictionaryType&>(type).value_type());
    default:
      return false;
  }
}

/// Row `i` of `array` as JSON: strings, numbers, booleans, nulls, lists and structs.
boost::json::value json_of(const arrow::Array& array, std::int64_t i, const std::string& where) {
  if (array.IsNull(i)) return nullptr;
  using arrow::Type;
  const auto list = [&](const arrow::Array& values, std::int64_t begin, std::int64_t end) {
    boost::json::array out;
    for (auto k = begin; k < end; ++k) out.push_back(json_of(values, k, where));
    return boost::json::value(std::move(out));
  };
  switch (array.type_id()) {
    case Type::STRING: return boost::json::value(static_cast<const arrow::StringArray&>(array).GetView(i));
    case Type::LARGE_STRING: return boost::json::value(static_cast<const arrow::LargeStringArray&>(array).GetView(i));
    case Type::BOOL: return static_cast<const arrow::BooleanArray&>(array).Value(i);
    case Type::INT64: return static_cast<const arrow::Int64Array&>(array).Value(i);
    case Type::INT32: return static_cast<const arrow::Int32Array&>(array).Value(i);
    case Type::DOUBLE: return static_cast<const arrow::DoubleArray&>(array).Value(i);
    case Type::FLOAT: return static_cast<const arrow::FloatArray&>(array).Value(i);
    case Type::LIST: {
      const auto& l = static_cast<const arrow::ListArray&>(array);
      return list(*l.values(), l.value_offset(i), l.value_offset(i) + l.value_length(i));
    }
    case Type::LARGE_LIST: {
      const auto& l = static_cast<const arrow::LargeListArray&>(array);
      return list(*l.values(), l.value_offset(i), l.value_offset(i) + l.value_length(i));
    }
    case Type::STRUCT: {
      // A message's other fields (a timestamp, an id of a type read here or not) do not stop it:
      // those of a type the dataset does not read become null.
      const auto& s = static_cast<const arrow::StructArray&>(array);
      boost::json::object out;
      for (int f = 0; f < s.num_fields(); ++f) {
        const auto& name = s.type()->field(f)->name();
        out[name] = readable(*s.field(f)->type()) ? json_of(*s.field(f), i, where) : boost::json::value(nullptr);
      }
      return out;
    }
    case Type::DICTIONARY: {
      const auto& d = static_cast<const arrow::DictionaryArray&>(array);
      return json_of(*d.dictionary(), d.GetValueIndex(i), where);
    }
    default:
      throw FormatError(where + ": a value of type " + array.type()->ToString() +
                        ", which the text dataset does not read (strings, numbers, lists and structs of them)");
  }
}

}  // namespace

void read_parquet(const std::string& file, const std::string& column, Documents& out) {
  std::unique_ptr<parquet::arrow::FileReader> reader;
  std::shared_ptr<arrow::Schema> schema;
  try {
    const auto input = value_or_throw(arrow::io::ReadableFile::Open(file), file);
    reader = value_or_throw(parquet::arrow::OpenFile(input, arrow::default_memory_pool()), file);
    datasets::check_parquet_claims(*reader->parquet_reader()->metadata(), value_or_throw(input->GetSize(), file), file);
    if (const auto status = reader->GetSchema(&schema); !status.ok()) throw FormatError(file + ": " + status.ToString());
  } catch (const parquet::ParquetException& e) {
    throw FormatError(file + ": not a readable parquet file (" + e.what() + ")");
  }
  // Only the columns a record is read by (`messages` and `column`) are read, each as it is
  // stored (in chunks: a column of more than 2 GiB of text has several).
  std::vector<std::pair<std::string, std::shared_ptr<arrow::ChunkedArray>>> kept;
  for (const auto& name : {std::string("messages"), column}) {
    const int index = schema->GetFieldIndex(name);
    if (index < 0 || (!kept.empty() && kept.front().first == name)) continue;
    std::shared_ptr<arrow::ChunkedArray> values;
    try {
      if (const auto status = reader->ReadColumn(index, &values); !status.ok())
        throw FormatError(file + ": column '" + name + "': " + status.ToString());
    } catch (const parquet::ParquetException& e) {
      throw FormatError(file + ": column '" + name + "' cannot be read (" + e.what() + ")");
    }
    kept.emplace_back(name, std::move(values));
  }
  if (kept.empty()) {
    std::string list;
    for (const auto& n : schema->field_names()) list += (list.empty() ? "" : ", ") + n;
    throw ConfigError(file + ": no column '" + column + "' (columns: " + (list.empty() ? "(none)" : list) +
                      "); choose one with --dataset.text_column, or give conversations a 'messages' column");
  }
  // Each column's place: its chunk and the row within it.
  std::vector<std::pair<int, std::int64_t>> at(kept.size(), {0, 0});
  const auto rows = kept.front().second->length();
  for (const auto& [name, values] : kept)
    if (values->length() != rows)
      throw FormatError(file + ": column '" + name + "' holds " + std::to_string(values->length()) + " rows, column '" +
                        kept.front().first + "' " + std::to_string(rows) + "; the file is damaged (re-download it)");
  for (std::int64_t row = 0; row < rows; ++row) {
    const auto where = file + ":" + std::to_string(row + 1);
    boost::json::object record;
    for (std::size_t c = 0; c < kept.size(); ++c) {
      const auto& chunks = *kept[c].second;
      auto& [chunk, local] = at[c];
      while (local >= chunks.chunk(chunk)->length()) {
        ++chunk;
        local = 0;
      }
      record[kept[c].first] = json_of(*chunks.chunk(chunk), local++, where);
    }
    // A null messages cell falls back to the text column, as a line without the field would.
    if (const auto* m = record.if_contains("messages"); m && m->is_null()) record.erase("messages");
    add_record(record, file, static_cast<std::size_t>(row + 1), column, out);
  }
}

}  // namespace shardkit::text
