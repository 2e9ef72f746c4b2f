// Coalesced broadcast of a module's tensors from rank 0, so every rank starts from the same values.
#pragma once

#include <vector>

#include "shardkit/comm.hpp"

namespace shardkit {

/// Overwrites every tensor in `tensors` with rank 0's values over `group`, one broadcast
/// per (dtype, device) through a flat buffer. No-op for a group of one. Collective: every
/// rank of `group` calls it with tensors of the same shapes, dtypes and order.
void broadcast_from_rank0(CommGroup& group, const std::vector<torch::Tensor>& tensors);

}  // namespace shardkit
