// Compares the weights two runs saved in their last checkpoints.
#pragma once

#include <algorithm>
#include <string>

#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include <shardkit/safetensors.hpp>
#include <shardkit/safetensors_torch.hpp>

namespace shardkit::test {

/// Largest difference between the same tensor of two runs' checkpoints/last model.safetensors,
/// relative to that tensor's largest magnitude in `b`; the files must hold the same names.
inline double weight_difference(const std::string& a, const std::string& b) {
  namespace st = shardkit::safetensors;
  const auto fa = st::File::open(a + "/checkpoints/last/pretrained_model/model.safetensors");
  const auto fb = st::File::open(b + "/checkpoints/last/pretrained_model/model.safetensors");
  double worst = 0;
  REQUIRE(fa.names() == fb.names());
  for (const auto& name : fa.names()) {
    const auto x = st::to_tensor(fa.get(name)).to(at::kDouble);
    const auto y = st::to_tensor(fb.get(name)).to(at::kDouble);
    const double scale = std::max(1e-12, y.abs().max().item<double>());
    worst = std::max(worst, (x - y).abs().max().item<double>() / scale);
  }
  return worst;
}

}  // namespace shardkit::test
