// ACT's 1-D and 2-D sinusoidal position embeddings.
#include "position_embedding.hpp"

#include <cmath>
#include <vector>

namespace shardkit::act {

torch::Tensor sinusoidal_1d(std::int64_t positions, std::int64_t dimension) {
  std::vector<double> table(static_cast<std::size_t>(positions * dimension));
  for (std::int64_t p = 0; p < positions; ++p)
    for (std::int64_t j = 0; j < dimension; ++j) {
      const double angle = static_cast<double>(p) /
                           std::pow(10000.0, 2.0 * static_cast<double>(j / 2) / static_cast<double>(dimension));
      table[static_cast<std::size_t>(p * dimension + j)] = j % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  return torch::tensor(table, torch::kFloat64).reshape({positions, dimension}).to(torch::kFloat32);
}

torch::Tensor sinusoidal_2d(const torch::Tensor& feature_map, std::int64_t dimension) {
  constexpr double kTwoPi = 2 * M_PI, kEps = 1e-6;
  const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(feature_map.device());
  const auto ones = torch::ones({1, feature_map.size(2), feature_map.size(3)}, options);
  auto y = ones.cumsum(1, torch::kFloat32);
  auto x = ones.cumsum(2, torch::kFloat32);
  y = y / (y.narrow(1, y.size(1) - 1, 1) + kEps) * kTwoPi;
  x = x / (x.narrow(2, x.size(2) - 1, 1) + kEps) * kTwoPi;
  const auto inverse_frequency =
      torch::pow(10000.0, 2 * torch::floor_divide(torch::arange(dimension, options), 2) / static_cast<double>(dimension));
  const auto embed = [&](const torch::Tensor& range) {
    const auto r = range.unsqueeze(-1) / inverse_frequency;  // (1, H, W, dimension)
    using torch::indexing::Slice;
    return torch::stack({r.index({"...", Slice(0, torch::indexing::None, 2)}).sin(),
                         r.index({"...", Slice(1, torch::indexing::None, 2)}).cos()},
                        -1)
        .flatten(3);
  };
  return torch::cat({embed(y), embed(x)}, 3).permute({0, 3, 1, 2});
}

}  // namespace shardkit::act
