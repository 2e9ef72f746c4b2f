// Layouts of the two sharding styles: dim-0 row ranges (fsdp) and flat element ranges (zero).
#include <functional>
#include <numeric>

#include "shardkit/error.hpp"
#include "shardkit/sharded_state.hpp"

namespace shardkit {
namespace {

std::int64_t product(const std::vector<std::int64_t>& shape, std::size_t from) {
  return std::accumulate(shape.begin() + static_cast<std::ptrdiff_t>(from), shape.end(), std::int64_t{1},
                         std::multiplies<>());
}

// Appends the boxes covering elements [begin, end) of the sub-tensor of `shape` from dimension
// `dim` on, whose leading coordinates are `prefix`; `local` counts elements already placed.
void add_flat_boxes(const std::vector<std::int64_t>& shape, std::size_t dim, std::vector<std::int64_t> prefix,
                    std::int64_t begin, std::int64_t end, std::int64_t& local, ShardLayout& out) {
  if (begin >= end) return;
  const auto inner = product(shape, dim + 1);  // elements per index of `dim`
  const auto whole_box = [&](std::int64_t first, std::int64_t count) {
    Box box;
    box.offsets = prefix;
    box.sizes.assign(prefix.size(), 1);
    box.offsets.push_back(first);
    box.sizes.push_back(count);
    for (std::size_t d = dim + 1; d < shape.size(); ++d) {
      box.offsets.push_back(0);
      box.sizes.push_back(shape[d]);
    }
    out.chunks.push_back({box, local});
    local += box.numel();
  };
  const auto first = begin / inner, last = (end - 1) / inner;  // indices of `dim` touched
  if (begin % inner == 0 && end % inner == 0) return whole_box(first, last - first + 1);
  const auto descend = [&](std::int64_t index, std::int64_t from, std::int64_t to) {
    auto deeper = prefix;
    deeper.push_back(index);
    add_flat_boxes(shape, dim + 1, deeper, from - index * inner, to - index * inner, local, out);
  };
  if (first == last) return descend(first, begin, end);
  std::int64_t full_from = first;
  if (begin % inner != 0) {
    descend(first, begin, (first + 1) * inner);
    full_from = first + 1;
  }
  std::int64_t full_to = last + 1;
  if (end % inner != 0) full_to = last;
  if (full_to > full_from) whole_box(full_from, full_to - full_from);
  if (end % inner != 0) descend(last, last * inner, end);
}

}  // namespace

ShardLayout ShardLayout::rows(const std::vector<std::int64_t>& shape, std::int64_t first, std::int64_t count) {
  ShardLayout layout;
  layout.global_shape = shape;
  if (count <= 0) return layout;
  if (shape.empty()) {
    if (first != 0 || count != 1) throw RuntimeError("ShardLayout::rows: a 0-dim tensor has one row");
    layout.chunks.push_back({full_box(shape), 0});
    return layout;
  }
  if (first < 0 || first + count > shape[0])
    throw RuntimeError("ShardLayout::rows: rows " + std::to_string(first) + ".." + std::to_string(first + count) +
                       " outside dim 0 of size " + std::to_string(shape[0]));
  auto box = full_box(shape);
  box.offsets[0] = first;
  box.sizes[0] = count;
  layout.chunks.push_back({box, 0});
  return layout;
}

ShardLayout ShardLayout::flat_range(const std::vector<std::int64_t>& shape, std::int64_t begin, std::int64_t end) {
  ShardLayout layout;
  layout.global_shape = shape;
  const auto numel = product(shape, 0);
  if (begin < 0 || end > numel || begin > end)
    throw RuntimeError("ShardLayout::flat_range: [" + std::to_string(begin) + ", " + std::to_string(end) +
                       ") outside a tensor of " + std::to_string(numel) + " elements");
  if (begin == end) return layout;
  if (shape.empty()) {
    layout.chunks.push_back({full_box(shape), 0});
    return layout;
  }
  std::int64_t local = 0;
  add_flat_boxes(shape, 0, {}, begin, end, local, layout);
  return layout;
}

}  // namespace shardkit
