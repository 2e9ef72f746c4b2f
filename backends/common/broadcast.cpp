// Coalesced broadcast: tensors grouped by dtype and device, flattened, broadcast, copied back.
#include "shardkit/broadcast.hpp"

#include <map>
#include <string>
#include <utility>

namespace shardkit {

void broadcast_from_rank0(CommGroup& group, const std::vector<torch::Tensor>& tensors) {
  if (group.size() == 1) return;
  std::map<std::pair<int, std::string>, std::vector<torch::Tensor>> groups;
  for (const auto& t : tensors)
    if (t.defined() && t.numel() > 0)
      groups[{static_cast<int>(t.scalar_type()), t.device().str()}].push_back(t);
  torch::NoGradGuard no_grad;
  // std::map orders the groups identically on every rank, so collectives pair up.
  for (auto& [key, members] : groups) {
    std::vector<torch::Tensor> flat_parts;
    for (const auto& t : members) flat_parts.push_back(t.reshape({-1}));
    auto flat = torch::cat(flat_parts);
    group.broadcast(flat, /*root=*/0);
    std::int64_t offset = 0;
    for (auto& t : members) {
      t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
      offset += t.numel();
    }
  }
}

}  // namespace shardkit
