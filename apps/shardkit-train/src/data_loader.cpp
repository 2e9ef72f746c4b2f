// Deterministic epoch permutations (splitmix64-seeded Fisher-Yates), per-rank batch slicing, prefetching.
#include "data_loader.hpp"

#include <numeric>

#include "shardkit/augmentation.hpp"
#include "shardkit/capability.hpp"
#include "shardkit/error.hpp"

namespace shardkit::train {

DataLoader::DataLoader(const Dataset& dataset, std::int64_t batch_size, std::uint64_t seed,
                       int dp_rank, int dp_size, LoaderOptions options)
    : dataset_(dataset), batch_size_(batch_size), seed_(seed), dp_rank_(dp_rank), dp_size_(dp_size),
      options_(std::move(options)) {
  const auto* augmented = capability<AugmentedDataset>(dataset_);
  augmented_ = augmented && augmented->augments() ? augmented : nullptr;
  const auto global = batch_size_ * dp_size_;
  batches_per_epoch_ = dataset_.size() / global;
  if (batches_per_epoch_ < 1)
    throw ConfigError("the dataset has " + std::to_string(dataset_.size()) +
                      " samples, fewer than one global batch of --batch_size=" +
                      std::to_string(batch_size_) + " x " + std::to_string(dp_size_) +
                      " processes; lower --batch_size or use a larger dataset");
}

DataLoader::~DataLoader() { stop_prefetch(); }

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

std::vector<std::int64_t> DataLoader::indices_at(const DataPosition& position, OrderCache& cache) const {
  if (cache.epoch != position.epoch) {
    cache.order = permutation(dataset_.size(), seed_, position.epoch);
    cache.epoch = position.epoch;
  }
  const auto start = position.batch_in_epoch * batch_size_ * dp_size_ + dp_rank_ * batch_size_;
  return std::vector<std::int64_t>(cache.order.begin() + start, cache.order.begin() + start + batch_size_);
}

DataPosition DataLoader::after(DataPosition position) const {
  if (++position.batch_in_epoch == batches_per_epoch_) {
    ++position.epoch;
    position.batch_in_epoch = 0;
  }
  return position;
}

std::vector<std::int64_t> DataLoader::peek_indices() { return indices_at(position_, cache_); }

Batch DataLoader::read(const DataPosition& position, OrderCache& cache) const {
  const auto indices = indices_at(position, cache);
  // Augmentation (before the transform: LeRobot augments in the dataset, normalizes after).
  auto batch = augmented_ ? augmented_->get_augmented_batch(indices, augmentation_seed(seed_, position.epoch))
                          : dataset_.get_batch(indices);
  if (options_.transform) options_.transform(batch);
  return batch;
}

void DataLoader::produce(DataPosition from) {
  OrderCache cache;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || static_cast<std::int64_t>(ready_.size()) < options_.prefetch; });
      if (stop_) return;
    }
    Prefetched item;
    try {
      item.batch = read(from, cache);
    } catch (...) {
      item.error = std::current_exception();
    }
    const bool failed = static_cast<bool>(item.error);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.push_back(std::move(item));
    }
    changed_.notify_all();
    if (failed) return;  // next() rethrows it; nothing after a failed batch is read
    from = after(from);
  }
}

void DataLoader::start_prefetch() {
  stop_ = false;
  producer_ = std::thread([this, from = position_] { produce(from); });
}

void DataLoader::stop_prefetch() {
  if (!producer_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  producer_.join();
  ready_.clear();
}

Batch DataLoader::next() {
  Batch batch;
  if (options_.prefetch <= 0) {
    batch = read(position_, cache_);
  } else {
    if (!producer_.joinable()) start_prefetch();
    Prefetched item;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return !ready_.empty(); });
      item = std::move(ready_.front());
      ready_.pop_front();
    }
    changed_.notify_all();
    if (item.error) {
      stop_prefetch();
      std::rethrow_exception(item.error);
    }
    batch = std::move(item.batch);
  }
  position_ = after(position_);
  return batch;
}

void DataLoader::seek(const DataPosition& position) {
  if (position.epoch < 0 || position.batch_in_epoch < 0 ||
      position.batch_in_epoch >= batches_per_epoch_)
    throw FormatError("data position (epoch " + std::to_string(position.epoch) + ", batch " +
                      std::to_string(position.batch_in_epoch) + ") does not fit an epoch of " +
                      std::to_string(batches_per_epoch_) + " batches");
  stop_prefetch();  // what was read ahead belongs to the old position
  position_ = position;
}

}  // namespace shardkit::train
