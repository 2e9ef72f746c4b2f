// The dataset interface: a fixed number of samples, read by index into batches.
#pragma once

#include <cstdint>
#include <vector>

#include "shardkit/plugin.hpp"
#include "shardkit/policy.hpp"

namespace shardkit {

/// A dataset plugin's object. Reading must be deterministic: the same indices give the
/// same batch, which is what makes resume exact.
class Dataset : public Plugin {
 public:
  ~Dataset() override;
  /// Number of samples (one epoch).
  virtual std::int64_t size() const = 0;
  /// Shapes of each feature, without the batch dimension.
  virtual FeatureShapes features() const = 0;
  /// The samples at `indices`, stacked along a new first dimension.
  virtual Batch get_batch(const std::vector<std::int64_t>& indices) const = 0;
  /// Makes get_batch() return, for each feature named in `deltas`, the frames at those offsets
  /// from each sample's frame (see DeltaIndices). Called at most once, before any get_batch(),
  /// with what the policy asked for. The default accepts only an empty map and throws
  /// ConfigError otherwise (a dataset without time, like `synthetic`).
  virtual void set_delta_indices(const DeltaIndices& deltas);
};

}  // namespace shardkit
