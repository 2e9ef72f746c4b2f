// Compares the weights two runs saved in their last checkpoints.
#pragma once

#include <algorithm>
#include <map>
#include <string>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include <shardkit/safetensors.hpp>
#include <shardkit/safetensors_torch.hpp>

namespace shardkit::test {

/// Every tensor of a run's checkpoints/last/<folder>/model.safetensors, as float64.
inline std::map<std::string, at::Tensor> checkpoint_weights(const std::string& run,
                                                            const std::string& folder = "pretrained_model") {
  namespace st = shardkit::safetensors;
  const auto file = st::File::open(run + "/checkpoints/last/" + folder + "/model.safetensors");
  std::map<std::string, at::Tensor> out;
  for (const auto& name : file.names()) out[name] = st::to_tensor(file.get(name)).to(at::kDouble);
  return out;
}

/// Largest difference between the same tensor of two runs' checkpoints/last/<folder>/model.safetensors,
/// relative to that tensor's largest magnitude in `b`; the files must hold the same names.
inline double weight_difference(const std::string& a, const std::string& b,
                                const std::string& folder = "pretrained_model") {
  namespace st = shardkit::safetensors;
  const auto file = [&](const std::string& run) {
    return st::File::open(run + "/checkpoints/last/" + folder + "/model.safetensors");
  };
  REQUIRE(file(a).names() == file(b).names());  // the same tensors, in the same order
  const auto x = checkpoint_weights(a, folder), y = checkpoint_weights(b, folder);
  double worst = 0;
  for (const auto& [name, want] : y) {
    const double scale = std::max(1e-12, want.abs().max().item<double>());
    worst = std::max(worst, (x.at(name) - want).abs().max().item<double>() / scale);
  }
  return worst;
}

}  // namespace shardkit::test
