// The safetensors dtype table: header spellings and element sizes.
#include "shardkit/safetensors.hpp"

namespace shardkit::safetensors {

namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  std::size_t size;
};

// Indexed by the enum's value.
constexpr DTypeInfo kTable[] = {
    {DType::BOOL, "BOOL", 1}, {DType::U8, "U8", 1},           {DType::I8, "I8", 1},
    {DType::I16, "I16", 2},   {DType::U16, "U16", 2},         {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2}, {DType::I32, "I32", 4},         {DType::U32, "U32", 4},
    {DType::F32, "F32", 4},   {DType::F64, "F64", 8},         {DType::I64, "I64", 8},
    {DType::U64, "U64", 8},   {DType::F8_E5M2, "F8_E5M2", 1}, {DType::F8_E4M3, "F8_E4M3", 1},
};

const DTypeInfo& info(DType dtype) { return kTable[static_cast<std::size_t>(dtype)]; }

}  // namespace

const DType kAllDTypes[15] = {
    DType::BOOL, DType::U8,   DType::I8,  DType::I16,     DType::U16,
    DType::F16,  DType::BF16, DType::I32, DType::U32,     DType::F32,
    DType::F64,  DType::I64,  DType::U64, DType::F8_E5M2, DType::F8_E4M3,
};

const char* dtype_name(DType dtype) { return info(dtype).name; }

std::size_t dtype_size(DType dtype) { return info(dtype).size; }

std::optional<DType> parse_dtype(const std::string& name) {
  for (const auto& entry : kTable) {
    if (name == entry.name) return entry.dtype;
  }
  return std::nullopt;
}

}  // namespace shardkit::safetensors
