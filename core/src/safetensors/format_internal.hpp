// Pieces shared by the safetensors reader and writer inside core (not part of the SDK).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "shardkit/safetensors.hpp"

namespace shardkit::safetensors::detail {

/// One header entry after validation.
struct Entry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::uint64_t begin;  // data_offsets, relative to the data section
  std::uint64_t end;
};

/// A validated header: entries in file order (increasing offsets) and the data section.
struct Header {
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
  std::size_t data_start;  // 8 + header length
};

/// Checks every rule of the format on a whole file image; throws FormatError naming `path`.
Header parse_header(const std::uint8_t* bytes, std::size_t size, const std::string& path);

/// What the writer puts before the tensor bytes, and the tensors in the order they follow.
struct Prepared {
  std::vector<std::uint8_t> head;       // 8-byte length + space-padded JSON header
  std::vector<const TensorRef*> order;  // tensors in file order
  std::uint64_t data_size;              // sum of their nbytes
};

/// Checks the tensors and builds the header as the reference writer does; throws
/// FormatError naming `where` (the destination) when the input cannot be written.
/// `require_data=false` accepts null data pointers (the bytes come later, streamed).
Prepared prepare(const std::vector<TensorRef>& tensors,
                 const std::map<std::string, std::string>& metadata, const std::string& where,
                 bool require_data = true);

/// Offset of the first byte that breaks strict UTF-8 (as Rust's str::from_utf8 sees it),
/// or `size` when the text is valid.
std::size_t invalid_utf8_offset(const char* text, std::size_t size);

/// Appends `text` to `out` as a quoted JSON string, escaped as the reference writer does;
/// `text` must be valid UTF-8 (bytes from 0x80 up are copied as they are). Config::to_json
/// writes its strings with it too.
void append_json_string(std::string* out, const std::string& text);

/// product(shape) * dtype_size(dtype) into `nbytes`; false when it overflows 64 bits or
/// a dimension is negative.
bool checked_nbytes(const std::vector<int64_t>& shape, DType dtype, std::uint64_t* nbytes);

/// "[2, 3]", as shapes are printed in error messages.
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace shardkit::safetensors::detail
