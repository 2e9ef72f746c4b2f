// Storage swaps for released and gathered parameters.
#include "param_storage.hpp"

#include <c10/core/StorageImpl.h>

#include "shardkit/error.hpp"

namespace shardkit::shard {

bool owns_storage(const torch::Tensor& param) {
  const auto bytes = static_cast<std::size_t>(param.numel()) * param.element_size();
  return param.is_contiguous() && param.storage_offset() == 0 && param.storage().nbytes() == bytes;
}

void require_own_storage(const std::string& name, const torch::Tensor& param) {
  if (!owns_storage(param))
    throw RuntimeError("parameter '" + name +
                       "' shares its storage with other tensors (a view or a slice of a larger tensor); "
                       "a sharded backend shards whole parameters: register it as its own parameter");
}

void point_storage(const torch::Tensor& param, const torch::Tensor& buffer, std::int64_t offset) {
  auto* impl = param.storage().unsafeGetStorageImpl();
  auto* data = static_cast<char*>(buffer.data_ptr()) + offset * buffer.element_size();
  impl->set_data_ptr_noswap(c10::DataPtr(data, buffer.device()));
  impl->set_nbytes(static_cast<std::size_t>(param.numel()) * param.element_size());
}

void release_storage(const torch::Tensor& param) {
  auto* impl = param.storage().unsafeGetStorageImpl();
  impl->set_data_ptr_noswap(c10::DataPtr(nullptr, param.device()));
  impl->set_nbytes(0);
}

bool has_storage(const torch::Tensor& param) { return param.storage().data() != nullptr; }

}  // namespace shardkit::shard
