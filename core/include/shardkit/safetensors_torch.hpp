// Bridges between safetensors views/refs and LibTorch tensors.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <string>

#include "shardkit/safetensors.hpp"

namespace shardkit::safetensors {

/// The safetensors dtype of a LibTorch scalar type. Throws FormatError for types the
/// format cannot hold (complex, quantized).
DType dtype_of(c10::ScalarType scalar_type);

/// The LibTorch scalar type of a safetensors dtype. Throws FormatError when the LibTorch
/// in use has none (LibTorch 2.15 has a scalar type for every safetensors dtype).
c10::ScalarType scalar_type_of(DType dtype);

/// A CPU tensor holding a copy of the view's bytes (one memcpy); it owns its memory, so
/// it outlives the File the view came from.
at::Tensor to_tensor(const TensorView& view);

/// A TensorRef borrowing `tensor`'s bytes for write_file/serialize; the tensor must stay
/// alive until then. Throws shardkit::Error unless it is a contiguous, strided CPU tensor.
TensorRef ref_of(const std::string& name, const at::Tensor& tensor);

}  // namespace shardkit::safetensors
