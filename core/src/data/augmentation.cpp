// Per-epoch augmentation seeds for AugmentedDataset.
#include "shardkit/augmentation.hpp"

namespace shardkit {

AugmentedDataset::~AugmentedDataset() = default;

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t augmentation_seed(std::uint64_t seed, std::int64_t epoch) {
  // A stream apart from the sampler's permutation seed, so the two are not correlated.
  std::uint64_t state = seed ^ 0xA5A5F00DC0FFEE11ull;
  splitmix64(state);
  state ^= static_cast<std::uint64_t>(epoch) * 0xD1B54A32D192ED03ull;
  return splitmix64(state);
}

}  // namespace shardkit
