// Gathering the sharded entries of a ShardedState into whole tensors on rank 0, entry by entry.
#pragma once

#include <map>
#include <string>

#include <ATen/Tensor.h>

#include "shardkit/comm.hpp"
#include "shardkit/sharded_state.hpp"

namespace shardkit {

/// The entries of `state` under `prefix` as whole tensors, on rank 0 of `group` (other ranks get
/// an empty map). Each entry's copy-0 boxes from every rank are all-gathered (one collective per
/// entry, so memory holds one entry per rank at a time besides the result). Collective: every
/// rank of `group` calls it with states of the same keys. Throws FormatError when the boxes do
/// not cover an entry.
std::map<std::string, at::Tensor> gather_whole_entries(const ShardedState& state, const std::string& prefix,
                                                      CommGroup& group);

}  // namespace shardkit
