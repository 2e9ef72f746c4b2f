// Which dtypes Gloo 1.13 moves and reduces itself, and how the others are emulated.
#pragma once

#include <string>

#include <torch/types.h>

#include <shardkit/comm.hpp>

namespace shardkit::gloo {

/// Python's spelling: "float32", "bfloat16", "int64".
std::string dtype_name(torch::ScalarType dtype);

/// The dtype a reduction of `dtype` runs in: itself when Gloo reduces it well, float32
/// for float16/bfloat16 (one rounding at the end instead of one per hop; Gloo refuses
/// bfloat16), int32 for int16 (Gloo refuses it); Undefined when there is none.
torch::ScalarType reduce_dtype(torch::ScalarType dtype);

/// The dtype a byte move (broadcast, all-gather) of `dtype` is sent as: a same-size dtype
/// Gloo accepts (bfloat16 and int16 as float16 bits, bool as uint8); Undefined when none.
torch::ScalarType wire_dtype(torch::ScalarType dtype);

/// The support table: the single source for supports() and for the refusals.
Support gloo_support(CommOp op, torch::ScalarType dtype);

}  // namespace shardkit::gloo
