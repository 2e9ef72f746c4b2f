// Conversions between safetensors dtypes/views and LibTorch scalar types/tensors.
#include <ATen/ATen.h>
#include <torch/version.h>

#include <cstring>

#include "shardkit/error.hpp"
#include "shardkit/safetensors_torch.hpp"

namespace shardkit::safetensors {

DType dtype_of(c10::ScalarType scalar_type) {
  switch (scalar_type) {
    case c10::ScalarType::Bool: return DType::BOOL;
    case c10::ScalarType::Byte: return DType::U8;
    case c10::ScalarType::Char: return DType::I8;
    case c10::ScalarType::Short: return DType::I16;
    case c10::ScalarType::Half: return DType::F16;
    case c10::ScalarType::BFloat16: return DType::BF16;
    case c10::ScalarType::Int: return DType::I32;
    case c10::ScalarType::Float: return DType::F32;
    case c10::ScalarType::Double: return DType::F64;
    case c10::ScalarType::Long: return DType::I64;
    case c10::ScalarType::Float8_e5m2: return DType::F8_E5M2;
    case c10::ScalarType::Float8_e4m3fn: return DType::F8_E4M3;
    case c10::ScalarType::UInt16: return DType::U16;
    case c10::ScalarType::UInt32: return DType::U32;
    case c10::ScalarType::UInt64: return DType::U64;
    default:
      throw FormatError(std::string("safetensors has no dtype for torch scalar type ") +
                        c10::toString(scalar_type) +
                        "; convert the tensor (e.g. .to(torch::kFloat)) first");
  }
}

c10::ScalarType scalar_type_of(DType dtype) {
  switch (dtype) {
    case DType::BOOL: return c10::ScalarType::Bool;
    case DType::U8: return c10::ScalarType::Byte;
    case DType::I8: return c10::ScalarType::Char;
    case DType::I16: return c10::ScalarType::Short;
    case DType::F16: return c10::ScalarType::Half;
    case DType::BF16: return c10::ScalarType::BFloat16;
    case DType::I32: return c10::ScalarType::Int;
    case DType::F32: return c10::ScalarType::Float;
    case DType::F64: return c10::ScalarType::Double;
    case DType::I64: return c10::ScalarType::Long;
    case DType::F8_E5M2: return c10::ScalarType::Float8_e5m2;
    case DType::F8_E4M3: return c10::ScalarType::Float8_e4m3fn;
    case DType::U16: return c10::ScalarType::UInt16;
    case DType::U32: return c10::ScalarType::UInt32;
    case DType::U64: return c10::ScalarType::UInt64;
    default:
      throw FormatError(std::string("safetensors dtype ") + dtype_name(dtype) +
                        " has no scalar type in LibTorch " TORCH_VERSION
                        "; read its bytes from the TensorView instead of calling to_tensor");
  }
}

at::Tensor to_tensor(const TensorView& view) {
  at::Tensor tensor = at::empty(view.shape, at::TensorOptions().dtype(scalar_type_of(view.dtype)));
  if (static_cast<std::size_t>(tensor.nbytes()) != view.nbytes) {
    throw FormatError(std::string("safetensors view of shape ") + c10::str(view.shape) +
                      " and dtype " + dtype_name(view.dtype) + " has " +
                      std::to_string(view.nbytes) + " bytes; expected " +
                      std::to_string(tensor.nbytes()));
  }
  if (view.nbytes) std::memcpy(tensor.data_ptr(), view.data, view.nbytes);
  return tensor;
}

TensorRef ref_of(const std::string& name, const at::Tensor& tensor) {
  if (!tensor.defined())
    throw Error("tensor '" + name + "' is undefined; cannot save it as safetensors");
  if (!tensor.device().is_cpu() || tensor.layout() != c10::kStrided) {
    throw Error("tensor '" + name + "' is on " + tensor.device().str() +
                " or not strided; pass tensor.to(torch::kCPU) (dense) to save it as safetensors");
  }
  if (!tensor.is_contiguous()) {
    throw Error("tensor '" + name +
                "' is not contiguous; pass tensor.contiguous() to save it as safetensors");
  }
  return TensorRef{name, dtype_of(tensor.scalar_type()), tensor.sizes().vec(), tensor.data_ptr(),
                   static_cast<std::size_t>(tensor.nbytes())};
}

}  // namespace shardkit::safetensors
