// The sharding engine's state: units, hooks, and what each micro-step has done so far.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "shardkit/autograd_hooks.hpp"
#include "shardkit/mesh.hpp"
#include "shardkit/nn/block.hpp"
#include "shardkit/sharding.hpp"
#include "unit.hpp"
#include "unit_selection.hpp"

namespace shardkit {

class ShardedBackend::Engine {
 public:
  Engine(const PluginContext& ctx, ShardingOptions options);
  /// Logs where the steps' time went besides compute (step_times.hpp).
  ~Engine();
  void setup(Policy& policy);
  std::vector<ParamShard> parameters() const;
  void begin_micro_step(bool sync);
  PolicyOutput forward(Policy& policy, const Batch& batch);
  void finish_gradients();
  double clip_grad_norm(double max_norm);
  /// The device the policy's parameters compute on, where the groups' collectives run.
  torch::Device collective_device() const;
  void after_optimizer_step();
  void model_state(ShardedState& state) const;
  void model_state_loaded();
  MemoryPlan plan() const;
  /// The wrap unit whose backward was running ("model.layers.1 (LlamaDecoderLayer)"), for an
  /// exception that left backward; "" when none was (the root's part of backward).
  std::string unit_in_backward() const;

  /// Called from the backward function attached to a unit's outputs.
  void pre_backward(std::size_t unit);
  /// Called from the backward function attached to a unit's inputs (units with frozen
  /// parameters): the unit's backward is over once every such input has its gradient.
  void input_grad_ready(std::size_t unit);

 private:
  struct StepState {
    int grads_seen = 0;
    int inputs_pending = 0;  // inputs of a unit with frozen parameters still waiting for their gradient
    bool forwarded = false, pre_backward_done = false, post_backward_done = false;
  };
  void install_hooks();
  /// ZeRO 1/2: gathers the updated shards into the whole parameters every rank keeps.
  void refresh_whole_parameters();
  /// forward() without the naming of the unit an exception came from.
  PolicyOutput forward_in_units(Policy& policy, const Batch& batch);
  void pre_forward(nn::BlockBase& block);
  void post_forward(nn::BlockBase& block, nn::TensorList& outputs);
  void grad_ready(std::size_t unit, std::size_t param);
  void post_backward(std::size_t unit);
  void queue_backward_end();
  void backward_end();
  std::size_t unit_of(const nn::BlockBase& block) const;
  Replicas shard_replicas() const;
  Replicas whole_replicas() const;
  /// The replica group to average shard gradients across (HSDP), or nullptr.
  CommGroup* replicas() const;

  ShardingOptions options_;
  std::shared_ptr<spdlog::logger> logger_;
  std::shared_ptr<CommGroup> local_group_;  // when there is no mesh (one process)
  CommGroup* world_ = nullptr;
  CommGroup* shard_ = nullptr;
  CommGroup* replicate_ = nullptr;
  int replicate_index_ = 0;
  Policy* policy_ = nullptr;
  std::vector<std::unique_ptr<shard::Unit>> units_;
  std::map<const nn::BlockBase*, std::size_t> unit_of_block_;
  std::vector<int> trainable_;          // trainable parameters per unit
  std::vector<bool> has_frozen_;        // units with parameters that get no gradient (LoRA's base)
  std::vector<bool> is_root_;           // units of the parameters outside wrap blocks
  std::vector<shard::NamedParam> whole_;
  std::vector<GradHookHandle> grad_hooks_;
  std::shared_ptr<nn::BlockHooks> block_hooks_;
  std::vector<StepState> step_;
  std::vector<std::size_t> forward_order_;
  bool sync_ = true;
  bool end_queued_ = false;
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t reducing_ = kNone;  // the unit whose gradient reduction is in flight
  // Where an exception came from: the blocks whose forward began and has not ended (innermost
  // last), and the unit whose backward began last and has not ended.
  std::vector<const nn::BlockBase*> in_forward_;
  std::size_t in_backward_ = kNone;
  // Waits and copies outside the units (whole parameters, the gradient norm), and how many
  // optimizer steps the units' and these times cover (the first step's are left out).
  shard::StepTimes own_times_;
  long timed_steps_ = -1;
  /// "blocks.0 (FixtureBlock)": unit `u`'s name and its block's class, for error messages.
  std::string describe_unit(std::size_t u) const;
};

}  // namespace shardkit
