// Random data augmentation as an optional Dataset capability, with randomness the loader seeds per epoch.
#pragma once

#include <cstdint>
#include <vector>

#include "shardkit/policy.hpp"

namespace shardkit {

/// An optional capability of a Dataset (shardkit/capability.hpp; datasets without it are
/// unchanged): random augmentation, such as LeRobot's
/// image transforms, that stays reproducible. The loader passes a seed that is a pure function
/// of (run seed, epoch) (augmentation_seed); the dataset draws each sample's randomness from
/// that seed and the sample's index alone, so a resumed run sees exactly the augmentations of
/// the uninterrupted one, whatever the batch size, number of ranks or threads, while each epoch
/// sees new ones. Dataset::get_batch stays the plain, unaugmented reading. Example:
/// \code
///   if (const auto* a = shardkit::capability<AugmentedDataset>(dataset); a && a->augments())
///     batch = a->get_augmented_batch(indices, augmentation_seed(seed, epoch));
/// \endcode
class AugmentedDataset {
 public:
  static constexpr const char* kCapabilityName = "augmentation";
  static constexpr std::uint32_t kCapabilityVersion = 1;
  virtual ~AugmentedDataset();
  /// Whether augmentation is switched on (when false the loader calls Dataset::get_batch).
  virtual bool augments() const = 0;
  /// Dataset::get_batch with each sample augmented by randomness drawn from (`seed`, its index)
  /// only: the same indices and seed give the same batch, bit for bit.
  virtual Batch get_augmented_batch(const std::vector<std::int64_t>& indices, std::uint64_t seed) const = 0;
};

/// The seed of epoch `epoch` of a run seeded with `seed` (splitmix64 of both): what the
/// training loader passes to AugmentedDataset::get_augmented_batch.
std::uint64_t augmentation_seed(std::uint64_t seed, std::int64_t epoch);

/// A splitmix64 step: advances `state` and returns the next 64 random bits (a small, fast,
/// well-mixed generator for deriving per-sample seeds).
std::uint64_t splitmix64(std::uint64_t& state);

}  // namespace shardkit
