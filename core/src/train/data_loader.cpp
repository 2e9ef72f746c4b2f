// Deterministic epoch permutations (splitmix64-seeded Fisher-Yates) and per-rank batch slicing.
#include "data_loader.hpp"

#include <numeric>

#include "shardkit/error.hpp"

namespace shardkit::train {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

DataLoader::DataLoader(const Dataset& dataset, std::int64_t batch_size, std::uint64_t seed,
                       int dp_rank, int dp_size)
    : dataset_(dataset), batch_size_(batch_size), seed_(seed), dp_rank_(dp_rank), dp_size_(dp_size) {
  const auto global = batch_size_ * dp_size_;
  batches_per_epoch_ = dataset_.size() / global;
  if (batches_per_epoch_ < 1)
    throw ConfigError("the dataset has " + std::to_string(dataset_.size()) +
                      " samples, fewer than one global batch of --batch_size=" +
                      std::to_string(batch_size_) + " x " + std::to_string(dp_size_) +
                      " processes; lower --batch_size or use a larger dataset");
}

std::vector<std::int64_t> DataLoader::permutation(std::int64_t n, std::uint64_t seed,
                                                  std::int64_t epoch) {
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  std::uint64_t state = seed * 0x100000001B3ull ^ (static_cast<std::uint64_t>(epoch) + 1) * 0xD6E8FEB86659FD93ull;
  for (std::int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::int64_t>(splitmix64(state) % static_cast<std::uint64_t>(i + 1));
    std::swap(perm[i], perm[j]);
  }
  return perm;
}

const std::vector<std::int64_t>& DataLoader::order() {
  if (cached_epoch_ != position_.epoch) {
    order_ = permutation(dataset_.size(), seed_, position_.epoch);
    cached_epoch_ = position_.epoch;
  }
  return order_;
}

std::vector<std::int64_t> DataLoader::peek_indices() {
  const auto& perm = order();
  const auto start = position_.batch_in_epoch * batch_size_ * dp_size_ + dp_rank_ * batch_size_;
  return std::vector<std::int64_t>(perm.begin() + start, perm.begin() + start + batch_size_);
}

Batch DataLoader::next() {
  const auto indices = peek_indices();
  if (++position_.batch_in_epoch == batches_per_epoch_) {
    ++position_.epoch;
    position_.batch_in_epoch = 0;
  }
  return dataset_.get_batch(indices);
}

void DataLoader::seek(const DataPosition& position) {
  if (position.epoch < 0 || position.batch_in_epoch < 0 ||
      position.batch_in_epoch >= batches_per_epoch_)
    throw FormatError("data position (epoch " + std::to_string(position.epoch) + ", batch " +
                      std::to_string(position.batch_in_epoch) + ") does not fit an epoch of " +
                      std::to_string(batches_per_epoch_) + " batches");
  position_ = position;
}

}  // namespace shardkit::train
