// Host staging buffers for asynchronous checkpoints.
#include "host_staging.hpp"

#include <ATen/ATen.h>

namespace shardkit::train {

namespace {

bool fits(const at::Tensor& buffer, const at::Tensor& source) {
  return buffer.defined() && buffer.sizes() == source.sizes() && buffer.scalar_type() == source.scalar_type();
}

}  // namespace

ShardedState HostStaging::copy(const ShardedState& live) {
  ShardedState staged;
  staged.objects = live.objects;
  staged.model_is_adapter = live.model_is_adapter;
  std::map<std::string, std::vector<at::Tensor>> kept;
  bytes_ = 0;
  for (const auto& [key, entry] : live.tensors) {
    StateEntry copy{entry.global_shape, entry.dtype, {}, entry.replicas};
    auto& buffers = kept[key];
    const auto old = buffers_.find(key);
    for (std::size_t i = 0; i < entry.chunks.size(); ++i) {
      const auto& chunk = entry.chunks[i];
      const auto source = chunk.data.detach();
      if (!entry.replicas.saved_here()) {
        copy.chunks.push_back({chunk.box, at::zeros({}, source.options().device(at::kCPU)).expand(source.sizes())});
        continue;
      }
      at::Tensor buffer;
      if (old != buffers_.end() && i < old->second.size() && fits(old->second[i], source)) buffer = old->second[i];
      if (!buffer.defined())
        buffer = at::empty(source.sizes(), source.options().device(at::kCPU).pinned_memory(source.is_cuda()));
      buffer.copy_(source);
      bytes_ += static_cast<std::int64_t>(buffer.nbytes());
      buffers.push_back(buffer);
      copy.chunks.push_back({chunk.box, buffer});
    }
    staged.tensors.emplace(key, std::move(copy));
  }
  buffers_ = std::move(kept);  // buffers of entries gone since the last save are freed
  return staged;
}

}  // namespace shardkit::train
