// Box arithmetic and the construction of a ShardedState from local tensors.
#include "shardkit/sharded_state.hpp"

#include <algorithm>

#include "shardkit/error.hpp"

namespace shardkit {

std::int64_t Box::numel() const {
  std::int64_t n = 1;
  for (auto s : sizes) n *= s;
  return n;
}

Box full_box(const std::vector<std::int64_t>& shape) {
  return Box{std::vector<std::int64_t>(shape.size(), 0), shape};
}

bool intersect(const Box& a, const Box& b, Box& out) {
  if (a.offsets.size() != b.offsets.size()) return false;
  out.offsets.resize(a.offsets.size());
  out.sizes.resize(a.offsets.size());
  for (std::size_t d = 0; d < a.offsets.size(); ++d) {
    const auto lo = std::max(a.offsets[d], b.offsets[d]);
    const auto hi = std::min(a.offsets[d] + a.sizes[d], b.offsets[d] + b.sizes[d]);
    if (hi <= lo) return false;  // no element in common (an empty box overlaps nothing)
    out.offsets[d] = lo;
    out.sizes[d] = hi - lo;
  }
  return true;
}

ShardLayout ShardLayout::whole(const std::vector<std::int64_t>& shape) {
  ShardLayout layout;
  layout.global_shape = shape;
  layout.chunks.push_back({full_box(shape), 0});
  return layout;
}

Replicas Replicas::among(int index, int count) {
  if (count < 1 || index < 0 || index >= count)
    throw RuntimeError("Replicas::among(" + std::to_string(index) + ", " + std::to_string(count) +
                       "): a rank's copy must be in 0.." + std::to_string(count - 1));
  return Replicas(index, count);
}

void ShardedState::add(const std::string& key, const at::Tensor& local, const ShardLayout& layout,
                       Replicas replicas) {
  if (!local.is_contiguous())
    throw RuntimeError("sharded state entry '" + key + "' is not contiguous");
  StateEntry entry{layout.global_shape, local.scalar_type(), {}, replicas};
  const auto flat = local.detach().reshape({-1});  // views share storage, no autograd
  for (const auto& chunk : layout.chunks) {
    const auto n = chunk.box.numel();
    if (chunk.local_offset + n > flat.numel())
      throw RuntimeError("sharded state entry '" + key + "': chunk exceeds the local tensor");
    entry.chunks.push_back({chunk.box, flat.narrow(0, chunk.local_offset, n).view(chunk.box.sizes)});
  }
  tensors.insert_or_assign(key, std::move(entry));
}

std::vector<std::string> ShardedState::keys_with_prefix(const std::string& prefix) const {
  std::vector<std::string> keys;
  for (auto it = tensors.lower_bound(prefix); it != tensors.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    keys.push_back(it->first);
  }
  return keys;
}

}  // namespace shardkit
