// Host staging buffers: the copy of a run's sharded state that an asynchronous checkpoint writes
// while training goes on changing the live tensors.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <ATen/Tensor.h>

#include "shardkit/sharded_state.hpp"

namespace shardkit::train {

/// Copies the chunks a save writes into host buffers it keeps from one save to the next (a
/// chunk of unchanged shape and dtype reuses its buffer; CUDA sources get pinned buffers).
/// Only one copy is in use at a time: the caller waits for the previous save's writer first.
class HostStaging {
 public:
  /// `live` with every chunk this rank writes (copy 0 of its replicas) copied into the
  /// staging buffers; the chunks of other copies, which formats never read, keep their boxes
  /// over a zero-strided placeholder so that nothing of the live state is referenced.
  ShardedState copy(const ShardedState& live);
  /// Bytes the buffers hold.
  std::int64_t bytes() const { return bytes_; }

 private:
  std::map<std::string, std::vector<at::Tensor>> buffers_;  ///< per entry, one per chunk
  std::int64_t bytes_ = 0;
};

}  // namespace shardkit::train
