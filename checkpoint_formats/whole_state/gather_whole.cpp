// Whole tensors from sharded boxes: box metadata exchanged once, data all-gathered per entry.
#include "shardkit/gather_whole.hpp"

#include <sstream>

#include <ATen/ATen.h>

#include "shardkit/error.hpp"

namespace shardkit {
namespace {

using Boxes = std::vector<Box>;

// The boxes this rank contributes per key (copy 0 of its replicas only), one line per key:
// "<key>\t<offsets>:<sizes>;<offsets>:<sizes>..." with comma-separated numbers.
std::string describe_boxes(const ShardedState& state, const std::string& prefix) {
  std::ostringstream out;
  for (const auto& [key, entry] : state.tensors) {
    if (key.rfind(prefix, 0) != 0) continue;
    out << key << '\t';
    if (entry.replicas.saved_here())
      for (const auto& chunk : entry.chunks) {
        for (std::size_t d = 0; d < chunk.box.offsets.size(); ++d) out << (d ? "," : "") << chunk.box.offsets[d];
        out << ':';
        for (std::size_t d = 0; d < chunk.box.sizes.size(); ++d) out << (d ? "," : "") << chunk.box.sizes[d];
        out << ';';
      }
    out << '\n';
  }
  return out.str();
}

std::vector<std::int64_t> numbers(const std::string& text) {
  std::vector<std::int64_t> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(std::stoll(item));
  return out;
}

std::map<std::string, Boxes> parse_boxes(const std::string& text) {
  std::map<std::string, Boxes> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto tab = line.find('\t');
    auto& boxes = out[line.substr(0, tab)];
    std::istringstream items(line.substr(tab + 1));
    std::string item;
    while (std::getline(items, item, ';')) {
      const auto colon = item.find(':');
      boxes.push_back({numbers(item.substr(0, colon)), numbers(item.substr(colon + 1))});
    }
  }
  return out;
}

at::Tensor region(at::Tensor tensor, const Box& box) {
  for (std::size_t d = 0; d < box.offsets.size(); ++d)
    tensor = tensor.narrow(static_cast<std::int64_t>(d), box.offsets[d], box.sizes[d]);
  return tensor;
}

}  // namespace

std::map<std::string, at::Tensor> gather_whole_entries(const ShardedState& state, const std::string& prefix,
                                                      CommGroup& group) {
  std::vector<std::map<std::string, Boxes>> boxes;
  for (const auto& text : group.all_gather_bytes(describe_boxes(state, prefix))) boxes.push_back(parse_boxes(text));
  std::map<std::string, at::Tensor> whole;
  const auto size = static_cast<std::size_t>(group.size());
  for (const auto& [key, entry] : state.tensors) {
    if (key.rfind(prefix, 0) != 0) continue;
    std::vector<std::int64_t> contributed(size, 0);
    for (std::size_t r = 0; r < size; ++r)
      for (const auto& box : boxes[r][key]) contributed[r] += box.numel();
    const auto most = *std::max_element(contributed.begin(), contributed.end());
    const auto options = at::TensorOptions().dtype(entry.dtype).device(at::kCPU);
    auto mine = at::zeros({most}, options);
    std::int64_t at = 0;
    if (entry.replicas.saved_here())
      for (const auto& chunk : entry.chunks) {
        const auto n = chunk.box.numel();
        mine.narrow(0, at, n).copy_(chunk.data.detach().reshape({-1}));
        at += n;
      }
    auto all = at::empty({static_cast<std::int64_t>(size) * most}, options);
    group.all_gather(all, mine);
    if (group.rank() != 0) continue;
    auto tensor = at::empty(entry.global_shape, options);
    std::int64_t covered = 0;
    for (std::size_t r = 0; r < size; ++r) {
      std::int64_t offset = static_cast<std::int64_t>(r) * most;
      for (const auto& box : boxes[r][key]) {
        region(tensor, box).copy_(all.narrow(0, offset, box.numel()).view(box.sizes));
        offset += box.numel();
        covered += box.numel();
      }
    }
    if (covered != tensor.numel())
      throw FormatError("gathering '" + key + "' for a whole-tensor file: the ranks hold " + std::to_string(covered) +
                        " of its " + std::to_string(tensor.numel()) + " elements");
    whole[key] = tensor;
  }
  return whole;
}

}  // namespace shardkit
