// The sharding engine behind the `fsdp` and `zero` backends: one machinery, several layouts.
//
// Parameters are grouped into units (the policy's wrap blocks, plus a root unit holding the
// rest). Each rank keeps a flat shard of every unit; a unit is all-gathered before its forward
// (prefetching the next one), released after it, gathered again before its backward, and its
// gradients are reduced to shards right after (overlapping the rest of backward). With
// dp_replicate > 1 the shard gradients are then averaged across replicas (HSDP). ZeRO-1/2 are
// the same engine with persistent whole parameters, gathered again after each optimizer step.
//
//   class Fsdp final : public shardkit::ShardedBackend {
//    public:
//     explicit Fsdp(const shardkit::PluginContext& ctx) : ShardedBackend(ctx, options_from(ctx)) {}
//   };
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shardkit/backend.hpp"
#include "shardkit/capability.hpp"
#include "shardkit/config.hpp"
#include "shardkit/plugin.hpp"
#include "shardkit/precision.hpp"
#include "shardkit/sharding_report.hpp"

namespace shardkit {

/// How a unit's parameters are cut into shards.
enum class ShardStyle {
  Rows,  ///< each parameter on dim 0, pieces of ceil(rows / S) rows, padded (FSDP2)
  Flat,  ///< the unit's parameters end to end, cut in S equal ranges (DeepSpeed ZeRO)
};

/// What a sharded backend asks of the engine.
struct ShardingOptions {
  std::string backend = "fsdp";  ///< the backend's name, for messages
  ShardStyle style = ShardStyle::Rows;
  /// false: every rank keeps whole parameters and only gradients and optimizer state are
  /// sharded (ZeRO-1/2); units are then gradient buckets, not wrap blocks.
  bool shard_parameters = true;
  /// Gradients reach their shard by reduce-scatter (true) or by all-reduce (ZeRO-1).
  bool reduce_scatter = true;
  bool reshard_after_forward = true;  ///< release a unit's parameters after its forward
  bool prefetch = true;               ///< gather the next unit while this one computes
  /// Wrap-unit classes given by the user (they win over the policy's wrap_modules()).
  std::vector<std::string> wrap_classes;
  /// > 0: every outermost block with at least this many parameters is a unit (when no
  /// classes were given by the user).
  std::int64_t min_num_params = 0;
  /// Modules whose dotted name matches this ECMAScript regex stay whole on every rank, their
  /// gradients all-reduced (empty: none).
  std::string ignored_modules;
  /// Parameters with at most this many elements stay whole (ZeRO-3's persistence threshold).
  std::int64_t persistence_threshold = 0;
  /// ZeRO-1/2: elements per gradient bucket; 0 = auto (auto_bucket_numel()).
  std::int64_t bucket_numel = 0;
  /// Mixed precision: parameters gathered and computed in param_dtype, gradients reduced in
  /// reduce_dtype, shards (what the optimizer steps and checkpoints hold) in fp32.
  PrecisionPolicy precision;
  /// FSDP2's CPUOffloadPolicy: on a CUDA run the units' shards (fp32 masters), their gradients
  /// and so the optimizer state live in pinned host memory and the optimizer steps on the CPU;
  /// each unit's shard is copied to the GPU for its gather, each reduced gradient back. Nothing
  /// changes on a CPU run. Default false.
  bool cpu_offload = false;
  /// The option names to quote in messages ("--accelerator.fsdp.wrap_modules", ...).
  std::string option_prefix = "--accelerator.fsdp.";
};

/// Reads the wrap options every sharded backend declares under its namespace: `wrap_modules`
/// (a JSON list '["Cls", ...]' or "Cls,Cls2"), `min_num_params`, `ignored_modules`, `prefetch`,
/// into `options` (whose option_prefix names them in messages).
void read_wrap_options(const Config& config, ShardingOptions& options);

/// A Backend that runs the engine; fsdp and zero are this with their options. It offers
/// ShardingReport (name the class in SHARDKIT_PLUGIN_CLASS).
class ShardedBackend : public WithCapabilities<Backend, ShardingReport> {
 public:
  ShardedBackend(const PluginContext& ctx, ShardingOptions options);
  ~ShardedBackend() override;
  void setup(Policy& policy) override;
  std::vector<ParamShard> parameters() override;
  void begin_micro_step(bool sync) override;
  PolicyOutput forward(Policy& policy, const Batch& batch) override;
  void finish_gradients() override;
  double clip_grad_norm(double max_norm) override;
  void after_optimizer_step() override;
  void model_state(ShardedState& state) override;
  void model_state_loaded() override;
  MemoryPlan plan() const override;
  std::string unit_in_backward() const override;

  class Engine;  ///< defined in backends/sharding_engine/engine.hpp

 private:
  std::unique_ptr<Engine> engine_;
};

}  // namespace shardkit
