// The c10d dtype table (Gloo 2.15 checked with 2 and 3 ranks on every op and dtype listed).
#include "dtype_table.hpp"

namespace shardkit::c10d_common {
namespace {

bool reduces(torch::ScalarType dtype) {
  switch (dtype) {
    case torch::kFloat:
    case torch::kDouble:
    case torch::kHalf:
    case torch::kBFloat16:
    case torch::kInt:
    case torch::kLong:
    case torch::kChar:
    case torch::kByte:
      return true;
    default:
      return false;
  }
}

}  // namespace

torch::ScalarType reduce_dtype(torch::ScalarType dtype) {
  if (reduces(dtype)) return dtype;
  return dtype == torch::kShort ? torch::kInt : torch::ScalarType::Undefined;
}

torch::ScalarType wire_dtype(torch::ScalarType dtype, bool moves_bool) {
  if (reduces(dtype)) return dtype;
  if (dtype == torch::kShort) return torch::kHalf;
  if (dtype == torch::kBool) return moves_bool ? torch::kBool : torch::kByte;
  return torch::ScalarType::Undefined;
}

}  // namespace shardkit::c10d_common
