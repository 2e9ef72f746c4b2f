// The sampler and loader: batch order is a pure function of (seed, epoch), disjoint across dp ranks; prefetched off the training thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "shardkit/augmentation.hpp"
#include "shardkit/dataset.hpp"

namespace shardkit::train {

/// Where the loader stands: which epoch and how many batches of it were consumed.
struct DataPosition {
  std::int64_t epoch = 0;
  std::int64_t batch_in_epoch = 0;
};

/// How batches are made beyond the sampler's order.
struct LoaderOptions {
  /// Applied to each batch after Dataset::get_batch (e.g. normalization); default none.
  std::function<void(Batch&)> transform;
  /// Batches read ahead on a background thread while the training thread computes
  /// (LeRobot's prefetch); 0 (default) = read on the calling thread inside next().
  std::int64_t prefetch = 0;
};

/// Shuffles each epoch with a permutation seeded by (seed, epoch), splits each global
/// batch of batch_size x dp_size samples into one slice per dp rank, drops the last
/// incomplete global batch. A dataset that is an AugmentedDataset (and augments) is read
/// with augmentation_seed(seed, epoch), so augmentations are as reproducible as the order.
/// Prefetching changes when batches are read, never which: the
/// sequence of next() is the same with any `prefetch`, and an error reading a batch is
/// thrown by the next() that would have returned it.
class DataLoader {
 public:
  DataLoader(const Dataset& dataset, std::int64_t batch_size, std::uint64_t seed, int dp_rank,
             int dp_size, LoaderOptions options = {});
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

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
  /// One epoch's order, cached (each thread has its own cache).
  struct OrderCache {
    std::int64_t epoch = -1;
    std::vector<std::int64_t> order;
  };
  struct Prefetched {
    Batch batch;
    std::exception_ptr error;
  };
  std::vector<std::int64_t> indices_at(const DataPosition& position, OrderCache& cache) const;
  DataPosition after(DataPosition position) const;
  /// The batch at `position`, augmented when the dataset is an AugmentedDataset that augments.
  Batch read(const DataPosition& position, OrderCache& cache) const;
  void start_prefetch();
  void stop_prefetch();
  void produce(DataPosition from);

  const Dataset& dataset_;
  const AugmentedDataset* augmented_ = nullptr;  ///< the dataset, when it augments
  std::int64_t batch_size_;
  std::uint64_t seed_;
  int dp_rank_, dp_size_;
  LoaderOptions options_;
  std::int64_t batches_per_epoch_;
  DataPosition position_;
  OrderCache cache_;

  std::thread producer_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Prefetched> ready_;
  bool stop_ = false;
};

}  // namespace shardkit::train
