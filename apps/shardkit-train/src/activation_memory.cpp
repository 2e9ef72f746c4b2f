// The activation memory of one micro-batch, measured for --dry_run's memory plan.
#include "activation_memory.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <numeric>

#include "shardkit/dataset.hpp"
#include "shardkit/policy.hpp"
#include "tensor_memory.hpp"

namespace shardkit::train {

ActivationMemory measure_activation_memory(Policy& policy, const Dataset& dataset, std::int64_t batch_size,
                                           const std::vector<std::string>& classes, std::int64_t every,
                                           nn::CheckpointingMode keep) {
  install_cpu_tensor_counter();
  ActivationMemory memory;
  memory.batch = std::min<std::int64_t>(batch_size, dataset.size());
  std::vector<std::int64_t> indices(static_cast<std::size_t>(memory.batch));
  std::iota(indices.begin(), indices.end(), 0);
  const auto batch = dataset.get_batch(indices);
  std::vector<torch::Tensor> trained;
  for (auto& p : policy.parameters())
    if (p.requires_grad()) {
      p.mutable_grad() = torch::zeros_like(p);
      trained.push_back(p);
    }
  const bool was_training = policy.is_training();
  policy.train();
  for (const auto mode : {nn::CheckpointingMode::None, nn::CheckpointingMode::Selective, nn::CheckpointingMode::Full}) {
    nn::checkpoint_blocks(policy, classes, mode, every);
    reset_cpu_tensor_peak();
    const auto before = cpu_tensor_bytes();
    {
      auto output = policy.forward(batch);
      output.loss.backward();
    }
    const auto peak = cpu_tensor_peak() - before;
    (mode == nn::CheckpointingMode::None ? memory.none
                                         : mode == nn::CheckpointingMode::Selective ? memory.selective : memory.full) = peak;
  }
  for (auto& p : trained) p.mutable_grad() = torch::Tensor();
  policy.train(was_training);
  nn::checkpoint_blocks(policy, classes, keep, every);
  return memory;
}

}  // namespace shardkit::train
