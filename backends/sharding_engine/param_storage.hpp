// Pointing a parameter's storage at gathered memory and releasing it, keeping its StorageImpl.
//
// Autograd saves parameters (and views of them) for backward by TensorImpl, and so by
// StorageImpl: swapping the storage's data pointer refills every saved tensor at once and
// leaves version counters alone (the FSDP2 technique; `copy_` would bump them).
#pragma once

#include <torch/types.h>

namespace shardkit::shard {

/// Throws RuntimeError naming `name` unless `param` owns its storage alone (contiguous, offset
/// 0, storage exactly its size): only such parameters can be released and refilled.
void require_own_storage(const std::string& name, const torch::Tensor& param);
/// Whether `param` owns its storage alone (what require_own_storage requires).
bool owns_storage(const torch::Tensor& param);
/// Makes `param`'s storage use `buffer`'s memory from element `offset` on (not owned: `buffer`
/// must outlive the use).
void point_storage(const torch::Tensor& param, const torch::Tensor& buffer, std::int64_t offset);
/// Frees `param`'s memory (its storage keeps no data; sizes are unchanged).
void release_storage(const torch::Tensor& param);
/// Whether `param`'s storage holds data.
bool has_storage(const torch::Tensor& param);

}  // namespace shardkit::shard
