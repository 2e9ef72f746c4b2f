// A sharding unit: parameters gathered, released and reduced together as one flat buffer.
//
// Each rank keeps a flat local shard of the unit (what the optimizer steps, through views);
// gathering all-gathers the shards of the shard group into the whole parameters, which the
// module's own parameter tensors then point at; reducing turns the whole gradients into this
// rank's shard of their average. Two layouts:
//   Rows: each parameter split on dim 0 in ceil(rows / S)-row pieces, padded (FSDP2)
//   Flat: the unit's parameters flattened end to end and cut in S equal ranges (ZeRO)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

#include "shardkit/comm.hpp"
#include "shardkit/sharded_state.hpp"
#include "shardkit/sharding.hpp"
#include "step_times.hpp"

namespace shardkit::shard {

/// The rows of a parameter's dim 0 that rank `k` of `S` holds in the Rows layout: pieces of
/// ceil(rows / S) rows in rank order, as torch.chunk cuts them (FSDP2's layout), so the last
/// ranks may hold nothing. An empty piece starts at `rows`, where DCP puts an empty chunk.
struct RowPiece {
  std::int64_t first = 0;
  std::int64_t count = 0;
};
RowPiece row_piece(std::int64_t rows, std::int64_t S, std::int64_t k);

/// One parameter of a unit.
struct UnitParam {
  std::vector<std::string> names;  ///< its fully qualified name(s): tied names share it
  torch::Tensor full;               ///< the module's parameter (storage swapped in and out)
  std::vector<std::int64_t> shape;
  std::int64_t numel = 0;
  std::int64_t flat_offset = 0;    ///< where it starts in the unit's whole flat data
  std::int64_t shard_offset = 0;   ///< where this rank's piece starts in the local shard
  std::int64_t shard_span = 0;     ///< Rows: elements per rank's (padded) piece
  std::int64_t reduce_offset = 0;  ///< where its piece starts in each rank's segment of a reduction
  std::int64_t rows_per_rank = 0;  ///< Rows: ceil(rows / S)
  torch::Tensor local;             ///< this rank's piece: a view of the shard
  ShardLayout layout;              ///< where `local` lies in the parameter
  bool trainable = true;
};

class Unit {
 public:
  /// `params`: (name, parameter) pairs, tied ones once with every name. `persistent`: the
  /// whole parameters are kept (ZeRO-1/2), gathered again only after the optimizer steps.
  /// `compute`: the dtype parameters are gathered in (mixed precision; unset: the masters'),
  /// `reduce`: the dtype gradients are reduced in (unset: the masters'). `offload`: the shard
  /// (and so its gradients and optimizer state) lives in pinned host memory while the
  /// parameters compute on their CUDA device (no effect when they are on the CPU).
  Unit(std::string name, std::vector<std::pair<std::vector<std::string>, torch::Tensor>> params,
       ShardStyle style, CommGroup& shard_group, bool persistent,
       std::optional<torch::ScalarType> compute = std::nullopt, std::optional<torch::ScalarType> reduce = std::nullopt,
       bool offload = false);

  const std::string& name() const { return name_; }
  /// Names this unit's collectives in the collective ledger ("fsdp, unit blocks.1").
  void set_ledger_label(std::string label) { label_ = std::move(label); }
  std::vector<UnitParam>& params() { return params_; }
  const std::vector<UnitParam>& params() const { return params_; }
  bool persistent() const { return persistent_; }
  /// Elements of this rank's shard, padding included.
  std::int64_t shard_numel() const { return shard_len_; }
  /// Elements of the whole parameters.
  std::int64_t whole_numel() const { return total_; }
  std::int64_t element_size() const { return shard_.element_size(); }
  /// Whether the shard lives in host memory while the parameters compute on a GPU.
  bool offloaded() const { return offload_; }
  /// ZeRO 1/2 without a compute dtype of their own: the shard (the optimizer's masters) is this
  /// rank's range of the whole parameters' one flat buffer, not a copy of it, and the
  /// all-gather after the optimizer step writes that buffer in place.
  bool shard_in_whole() const { return in_place_; }

  /// Copies this rank's pieces out of the whole parameters into the shard (at setup); then
  /// turns the parameters into the compute dtype and releases them unless persistent. When
  /// shard_in_whole(), moves the whole parameters into the flat buffer that holds the shard.
  void shard_from_whole();
  /// Starts gathering (asynchronously) unless gathered or already started.
  void start_gather();
  /// Finishes (or runs) the gather and points the parameters at the whole data.
  void unshard();
  /// Releases the whole parameters (waits for a pending gather first). No-op when persistent.
  void reshard();
  bool gathered() const { return gathered_; }

  /// Moves parameter `index`'s gradient into the reduction's input as soon as backward has
  /// produced it, and drops it (DeepSpeed's contiguous gradients), so that a unit's gradients
  /// are never held twice; start_reduce() then adds only what is left.
  void take_gradient(std::size_t index);
  /// Moves the whole gradients into a reduction of their average over the shard group
  /// (reduce-scatter, or all-reduce when `scatter` is false) and drops them. Missing
  /// gradients count as zeros.
  void start_reduce(bool scatter);
  /// Waits for the reduction, averages across `replicas` (HSDP; nullptr: none) and adds the
  /// result to the pieces' gradients.
  void finish_reduce(CommGroup* replicas);
  bool reducing() const { return reduce_work_ != nullptr; }

  /// Persistent units: gathers the shards into the whole parameters (in place when
  /// shard_in_whole(), else through a gathered buffer and a copy).
  void refresh_whole();

  /// The time this unit spent waiting, copying and issuing collectives since the last reset.
  const StepTimes& times() const { return times_; }
  void reset_times() { times_ = StepTimes{}; }

 private:
  void lay_out(ShardStyle style);
  void copy_out(const torch::Tensor& gathered, const torch::Tensor& whole) const;
  /// Finishes (or runs) the gather and returns the whole parameters, flat, in their order.
  torch::Tensor finish_gather();
  /// Adds `p`'s gradient (if any) into its places in a reduction's input.
  void add_gradient(const UnitParam& p, const torch::Tensor& input) const;
  /// The reduction's input, zeros (a missing gradient counts as zeros), made on first use.
  torch::Tensor& reduce_input();
  /// Elements of each rank's segment of a gradient reduction: the whole shard, or in a Rows
  /// unit with frozen parameters only the trainable pieces (FSDP2 reduces only parameters
  /// with gradients: a LoRA run's reductions are the adapter's size, not the base's).
  std::int64_t reduce_len_ = 0;
  /// Elements of a reduction's input that are padding: the group's segments beyond the
  /// parameters they reduce (the ledger counts them apart).
  std::int64_t reduce_padding_ = 0;

  std::string name_, label_;
  std::vector<UnitParam> params_;
  ShardStyle style_;
  CommGroup& group_;
  bool persistent_;
  std::optional<torch::ScalarType> compute_, reduce_;
  torch::Device device_{torch::kCPU};  // where the parameters compute (and collectives run)
  bool offload_ = false;
  bool in_place_ = false;
  std::int64_t total_ = 0, shard_len_ = 0;
  torch::Tensor gather_input_;          // the shard in the compute dtype while a gather is pending
  torch::Tensor shard_;                 // [shard_len_] local shard
  torch::Tensor gathered_buffer_;       // [S * shard_len_] while a gather is pending or kept
  torch::Tensor whole_;                 // what the parameters point into while gathered (always, shard_in_whole())
  WorkHandle gather_work_;
  bool gathered_ = false;
  torch::Tensor reduce_input_;
  bool scattered_ = false;  ///< the reduction in flight is a reduce-scatter (else an all-reduce)
  WorkHandle reduce_work_;
  StepTimes times_;
};

}  // namespace shardkit::shard
