// The Gloo 1.13 dtype table (checked: it reduces and moves float32/64, float16, int8/32/64,
// uint8 and refuses bfloat16, int16 and bool with "Invalid scalar type").
#include "dtype_support.hpp"

namespace shardkit::gloo {
namespace {

bool gloo_accepts(torch::ScalarType dtype) {
  switch (dtype) {
    case torch::kFloat:
    case torch::kDouble:
    case torch::kHalf:
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

std::string dtype_name(torch::ScalarType dtype) {
  switch (dtype) {
    case torch::kFloat: return "float32";
    case torch::kDouble: return "float64";
    case torch::kHalf: return "float16";
    case torch::kBFloat16: return "bfloat16";
    case torch::kInt: return "int32";
    case torch::kLong: return "int64";
    case torch::kShort: return "int16";
    case torch::kChar: return "int8";
    case torch::kByte: return "uint8";
    case torch::kBool: return "bool";
    case torch::kComplexHalf: return "complex32";
    case torch::kComplexFloat: return "complex64";
    case torch::kComplexDouble: return "complex128";
    default: return c10::toString(dtype);
  }
}

torch::ScalarType reduce_dtype(torch::ScalarType dtype) {
  switch (dtype) {
    case torch::kHalf:
    case torch::kBFloat16:
      return torch::kFloat;
    case torch::kShort:
      return torch::kInt;
    default:
      return gloo_accepts(dtype) ? dtype : torch::ScalarType::Undefined;
  }
}

torch::ScalarType wire_dtype(torch::ScalarType dtype) {
  switch (dtype) {
    case torch::kBFloat16:
    case torch::kShort:
      return torch::kHalf;
    case torch::kBool:
      return torch::kByte;
    default:
      return gloo_accepts(dtype) ? dtype : torch::ScalarType::Undefined;
  }
}

Support gloo_support(CommOp op, torch::ScalarType dtype) {
  switch (op) {
    case CommOp::Barrier:
      return Support::Native;
    case CommOp::AllReduce: {
      const auto in = reduce_dtype(dtype);
      if (in == torch::ScalarType::Undefined) return Support::Unsupported;
      return in == dtype ? Support::Native : Support::Emulated;
    }
    case CommOp::ReduceScatter:
      // Gloo 1.13 has no reduce-scatter: an all-reduce of a copy, then this rank's chunk.
      return reduce_dtype(dtype) == torch::ScalarType::Undefined ? Support::Unsupported
                                                                  : Support::Emulated;
    case CommOp::Broadcast: {
      const auto wire = wire_dtype(dtype);
      if (wire == torch::ScalarType::Undefined) return Support::Unsupported;
      return wire == dtype ? Support::Native : Support::Emulated;
    }
    case CommOp::AllGather:
      // Gloo 1.13 gathers into a list of tensors only: views of the output, one local copy.
      return wire_dtype(dtype) == torch::ScalarType::Undefined ? Support::Unsupported
                                                                : Support::Emulated;
  }
  return Support::Unsupported;
}

}  // namespace shardkit::gloo
