// The sampler and loader: batch order is a pure function of (seed, epoch), disjoint across dp ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "shardkit/dataset.hpp"

namespace shardkit::train {

/// Where the loader stands: which epoch and how many batches of it were consumed.
struct DataPosition {
  std::int64_t epoch = 0;
  std::int64_t batch_in_epoch = 0;
};

/// Shuffles each epoch with a permutation seeded by (seed, epoch), splits each global
/// batch of batch_size x dp_size samples into one slice per dp rank, drops the last
/// incomplete global batch.
class DataLoader {
 public:
  DataLoader(const Dataset& dataset, std::int64_t batch_size, std::uint64_t seed, int dp_rank,
             int dp_size);

  /// The next micro-batch for this rank.
  Batch next();
  /// The indices next() would read, without advancing.
  std::vector<std::int64_t> peek_indices();
  const DataPosition& position() const { return position_; }
  void seek(const DataPosition& position);
  std::int64_t batches_per_epoch() const { return batches_per_epoch_; }

  /// The permutation of epoch `epoch` of `n` samples under `seed` (exposed for tests).
  static std::vector<std::int64_t> permutation(std::int64_t n, std::uint64_t seed,
                                               std::int64_t epoch);

 private:
  const std::vector<std::int64_t>& order();
  const Dataset& dataset_;
  std::int64_t batch_size_;
  std::uint64_t seed_;
  int dp_rank_, dp_size_;
  std::int64_t batches_per_epoch_;
  DataPosition position_;
  std::int64_t cached_epoch_ = -1;
  std::vector<std::int64_t> order_;
};

}  // namespace shardkit::train
