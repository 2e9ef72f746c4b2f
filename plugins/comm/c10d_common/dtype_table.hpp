// Which dtypes the c10d transports (Gloo and NCCL in LibTorch 2.15) move and reduce themselves.
#pragma once

#include <torch/types.h>

namespace shardkit::c10d_common {

/// The dtype a reduction of `dtype` runs in. float32/64, float16, bfloat16, int8/32/64
/// and uint8 reduce as themselves on both transports; int16 through an int32 copy (Gloo
/// 2.15 refuses it: "Invalid scalar type"; NCCL has no int16); bool and complex dtypes
/// are refused (Undefined): a bool "sum" (OR) is nobody's intent in training.
torch::ScalarType reduce_dtype(torch::ScalarType dtype);

/// The same-size dtype a byte move (broadcast, all-gather) of `dtype` is sent as: itself
/// when the transport reduces it, int16 as float16 bits, bool as itself when
/// `moves_bool` (Gloo) or as uint8 (NCCL); Undefined when refused.
torch::ScalarType wire_dtype(torch::ScalarType dtype, bool moves_bool);

}  // namespace shardkit::c10d_common
