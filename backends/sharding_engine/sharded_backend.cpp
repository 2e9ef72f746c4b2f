// ShardedBackend: the Backend interface over the sharding engine.
#include "engine.hpp"
#include "shardkit/error.hpp"

namespace shardkit {

ShardedBackend::ShardedBackend(const PluginContext& ctx, ShardingOptions options)
    : engine_(std::make_unique<Engine>(ctx, std::move(options))) {}
ShardedBackend::~ShardedBackend() = default;

void ShardedBackend::setup(Policy& policy) { engine_->setup(policy); }
std::vector<ParamShard> ShardedBackend::parameters() { return engine_->parameters(); }
void ShardedBackend::begin_micro_step(bool sync) { engine_->begin_micro_step(sync); }
PolicyOutput ShardedBackend::forward(Policy& policy, const Batch& batch) { return engine_->forward(policy, batch); }
void ShardedBackend::finish_gradients() { engine_->finish_gradients(); }
double ShardedBackend::clip_grad_norm(double max_norm) { return engine_->clip_grad_norm(max_norm); }
void ShardedBackend::after_optimizer_step() { engine_->after_optimizer_step(); }
void ShardedBackend::model_state(ShardedState& state) { engine_->model_state(state); }
void ShardedBackend::model_state_loaded() { engine_->model_state_loaded(); }
MemoryPlan ShardedBackend::plan() const { return engine_->plan(); }
std::string ShardedBackend::unit_in_backward() const { return engine_->unit_in_backward(); }

}  // namespace shardkit
