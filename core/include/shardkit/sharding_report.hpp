// An optional capability of a Backend that shards: what it holds per rank, and where a backward failed.
//
// The trainer asks for it with shardkit::capability<ShardingReport>(backend): --dry_run prints
// plan(), and an exception out of backward names unit_in_backward(). The fsdp and zero backends
// offer it (through ShardedBackend); a backend without it holds whole parameters.
#pragma once

#include <cstdint>
#include <string>

namespace shardkit {

/// Per-rank bytes of a sharded run, for the start-up plan and --dry_run.
struct MemoryPlan {
  std::int64_t parameters = 0;       ///< shards plus whole (ignored/persistent) parameters
  std::int64_t gradients = 0;        ///< shard gradients plus whole ones
  std::int64_t optimizer = 0;        ///< AdamW's two moments for what this rank steps
  std::int64_t largest_unit = 0;     ///< the largest unit's gathered parameters
  std::int64_t gathered_peak = 0;    ///< gathered parameters alive at once at most (estimate)
  int units = 0;
  std::string describe() const;      ///< one line, human units
};

class ShardingReport {
 public:
  static constexpr const char* kCapabilityName = "sharding_report";
  static constexpr std::uint32_t kCapabilityVersion = 1;
  virtual ~ShardingReport();
  /// The per-rank memory plan (after Backend::setup()).
  virtual MemoryPlan plan() const = 0;
  /// The wrap unit ("model.layers.1 (LlamaDecoderLayer)") whose backward was running when an
  /// exception left the last backward, "" when none was; forward() names its unit itself.
  virtual std::string unit_in_backward() const = 0;
};

}  // namespace shardkit
