// The sharding engine: units gathered around their forward and backward, gradients reduced to shards.
#include "engine.hpp"
#include "shardkit/logging.hpp"

#include <algorithm>

#include <torch/autograd.h>

#include "shardkit/broadcast.hpp"
#include "shardkit/error.hpp"
#include "shardkit/error_text.hpp"
#include "shardkit/ledger.hpp"
#include "shardkit/optim/grad_clip.hpp"
#include "shardkit/runtime.hpp"

namespace shardkit {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Identity on a unit's output whose backward runs before the unit's own backward: the place
// to gather the unit's parameters again.
struct PreBackward : public torch::autograd::Function<PreBackward> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& output, ShardedBackend::Engine* engine,
                               std::int64_t unit) {
    ctx->saved_data["engine"] = reinterpret_cast<std::int64_t>(engine);
    ctx->saved_data["unit"] = unit;
    return output;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* engine = reinterpret_cast<ShardedBackend::Engine*>(ctx->saved_data["engine"].toInt());
    engine->pre_backward(static_cast<std::size_t>(ctx->saved_data["unit"].toInt()));
    return {grads[0], torch::Tensor(), torch::Tensor()};
  }
};

// Identity on a unit's input whose backward runs once the unit's backward has produced that
// input's gradient, i.e. after every use of the unit's parameters (FSDP2's post-backward
// function on inputs). A unit with frozen parameters needs it: its last trainable gradient
// can arrive while frozen weights are still needed for the input gradient.
struct PostBackward : public torch::autograd::Function<PostBackward> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& input, ShardedBackend::Engine* engine,
                               std::int64_t unit) {
    ctx->saved_data["engine"] = reinterpret_cast<std::int64_t>(engine);
    ctx->saved_data["unit"] = unit;
    return input.view_as(input);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* engine = reinterpret_cast<ShardedBackend::Engine*>(ctx->saved_data["engine"].toInt());
    engine->input_grad_ready(static_cast<std::size_t>(ctx->saved_data["unit"].toInt()));
    return {grads[0], torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

ShardedBackend::Engine::Engine(const PluginContext& ctx, ShardingOptions options)
    : options_(std::move(options)), logger_(ctx.logger) {
  // Under mixed precision every parameter computes in param_dtype, so none stays whole by size.
  if (options_.precision.active()) options_.persistence_threshold = 0;
  if (ctx.mesh != nullptr) {
    world_ = &ctx.mesh->dp_group();
    shard_ = &ctx.mesh->shard_group();
    replicate_ = &ctx.mesh->replicate_group();
    replicate_index_ = ctx.mesh->replicate_index();
  } else {
    if (ctx.runtime != nullptr && ctx.runtime->multi_process())
      throw RuntimeError("backend " + options_.backend + " was started without the run's device mesh on rank " +
                         std::to_string(ctx.runtime->rank) + "; the host must pass PluginContext::mesh");
    local_group_ = make_local_group("dp");
    world_ = shard_ = replicate_ = local_group_.get();
  }
}

ShardedBackend::Engine::~Engine() {
  if (!logger_ || timed_steps_ < 1) return;
  shard::StepTimes sum = own_times_;
  for (const auto& unit : units_) sum += unit->times();
  logger_->info("{}: besides compute, per optimizer step (mean of the {} steps after the first): {}", options_.backend,
                timed_steps_, sum.describe_per_step(timed_steps_));
}

Replicas ShardedBackend::Engine::shard_replicas() const {
  return Replicas::among(replicate_index_, replicate_->size());
}
CommGroup* ShardedBackend::Engine::replicas() const { return replicate_->size() > 1 ? replicate_ : nullptr; }

Replicas ShardedBackend::Engine::whole_replicas() const { return Replicas::among(world_->rank(), world_->size()); }

void ShardedBackend::Engine::setup(Policy& policy) {
  policy_ = &policy;
  // Ranks start identical whatever their seeds: rank 0's parameters and buffers win.
  std::vector<torch::Tensor> tensors;
  for (const auto& p : policy.parameters()) tensors.push_back(p);
  for (const auto& b : policy.buffers()) tensors.push_back(b);
  broadcast_from_rank0(*world_, tensors);

  auto selection = options_.shard_parameters ? shard::select_wrap_units(policy, options_)
                                             : shard::select_gradient_buckets(policy, options_);
  whole_ = std::move(selection.whole);
  for (auto& spec : selection.units) {
    const auto& precision = options_.precision;
    std::unique_ptr<shard::Unit> unit;
    try {
      unit = std::make_unique<shard::Unit>(spec.name, std::move(spec.params), options_.style, *shard_,
                                           !options_.shard_parameters, precision.param_dtype, precision.reduce_dtype,
                                           options_.cpu_offload);
      unit->shard_from_whole();
    } catch (const std::exception& e) {  // one line naming the rank, never LibTorch's stack trace
      throw RuntimeError(options_.backend + " on rank " + std::to_string(world_->rank()) + ": " + one_line_message(e));
    }
    unit->set_ledger_label(options_.backend + (options_.shard_parameters ? ", unit " : ", bucket ") + spec.name);
    if (spec.block != nullptr) unit_of_block_[spec.block] = units_.size();
    is_root_.push_back(spec.block == nullptr && options_.shard_parameters);
    int trainable = 0;
    for (const auto& p : unit->params()) trainable += p.trainable ? 1 : 0;
    trainable_.push_back(trainable);
    has_frozen_.push_back(trainable < static_cast<int>(unit->params().size()));
    units_.push_back(std::move(unit));
  }
  step_.assign(units_.size(), StepState{});
  install_hooks();
  if (logger_) {
    logger_->info("{}: {} units ({} wrap blocks), {} whole parameters, sharded over dp_shard={} x dp_replicate={}",
                  options_.backend, units_.size(), unit_of_block_.size(), whole_.size(), shard_->size(),
                  replicate_->size());
    logger_->info("{}: memory plan per rank: {}", options_.backend, plan().describe());
    if (options_.precision.active())
      logger_->info("{}: mixed precision {}", options_.backend, options_.precision.describe());
    if (!units_.empty() && units_.front()->offloaded()) {
      const auto p = plan();
      std::int64_t whole = 0;
      for (const auto& [names, t] : whole_) whole += t.numel() * t.element_size() * (t.requires_grad() ? 4 : 1);
      logger_->info("{}: CPU offload: the shards, their gradients and AdamW's state ({}) live in host memory (the "
                    "shards pinned) and the optimizer steps on the CPU; the GPU holds the gathered units (at most {}) "
                    "and {} of whole parameters with their gradients and state",
                    options_.backend, format_bytes(p.parameters + p.gradients + p.optimizer - whole),
                    format_bytes(p.gathered_peak), format_bytes(whole));
    }
  }
}

void ShardedBackend::Engine::install_hooks() {
  auto hooks = std::make_shared<nn::BlockHooks>();
  hooks->pre_forward = [this](nn::BlockBase& block, nn::TensorList& inputs) {
    pre_forward(block);
    const auto& precision = options_.precision;
    if (precision.active() && precision.cast_forward_inputs)
      for (auto& t : inputs)
        if (t.defined() && t.is_floating_point()) t = t.to(*precision.param_dtype);
    const auto u = unit_of(block);
    if (has_frozen_[u] && trainable_[u] > 0 && torch::GradMode::is_enabled())
      for (auto& t : inputs)
        if (t.defined() && t.requires_grad()) {
          t = PostBackward::apply(t, this, static_cast<std::int64_t>(u));
          ++step_[u].inputs_pending;
        }
  };
  hooks->post_forward = [this](nn::BlockBase& block, nn::TensorList& outputs) { post_forward(block, outputs); };
  block_hooks_ = hooks;
  for (const auto& [block, index] : unit_of_block_)
    const_cast<nn::BlockBase*>(block)->set_hooks(block_hooks_);
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const auto& params = units_[u]->params();
    for (std::size_t i = 0; i < params.size(); ++i)
      if (params[i].trainable)
        grad_hooks_.push_back(on_grad_accumulated(params[i].full, [this, u, i] { grad_ready(u, i); }));
  }
}

std::size_t ShardedBackend::Engine::unit_of(const nn::BlockBase& block) const {
  return unit_of_block_.at(&block);
}

void ShardedBackend::Engine::begin_micro_step(bool sync) {
  sync_ = sync;
  step_.assign(units_.size(), StepState{});
  forward_order_.clear();
  end_queued_ = false;
  reducing_ = kNone;
  in_backward_ = kNone;
}

PolicyOutput ShardedBackend::Engine::forward(Policy& policy, const Batch& batch) {
  in_forward_.clear();
  try {
    return forward_in_units(policy, batch);
  } catch (...) {
    // A LibTorch error inside a unit's forward names the unit (the innermost one still open).
    const auto* block = in_forward_.empty() ? nullptr : in_forward_.back();
    rethrow_with_context({.module = block ? describe_unit(unit_of(*block)) : std::string()});
  }
}

PolicyOutput ShardedBackend::Engine::forward_in_units(Policy& policy, const Batch& batch) {
  // Units outside blocks (the root) are gathered for the whole forward and backward.
  for (std::size_t u = 0; u < units_.size(); ++u)
    if (is_root_[u]) units_[u]->unshard();
  const auto& precision = options_.precision;
  if (!precision.active()) return policy.forward(batch);
  Batch cast = batch;
  if (precision.cast_forward_inputs)
    for (auto& [key, tensor] : cast)
      if (tensor.is_floating_point()) tensor = tensor.to(*precision.param_dtype);
  PolicyOutput output;
  {
    // Casting units' parameters and inputs covers only what the engine holds. Buffers (frozen
    // batch-norm statistics, position tables), modules kept whole by ignored_modules and fp32
    // tensors a policy creates stay fp32 and meet param_dtype weights between unit boundaries
    // (and zero 1/2 has no unit boundaries at all), which LibTorch's kernels refuse. Autocast
    // casts them per operation, as ddp's forward does and as accelerate runs FSDP under
    // mixed precision; for the units' param_dtype weights its casts are no-ops.
    const auto params = policy.parameters();
    AutocastGuard autocast(precision, params.empty() ? torch::Device(torch::kCPU) : params.front().device());
    output = policy.forward(cast);
  }
  if (precision.output_dtype) output.loss = output.loss.to(*precision.output_dtype);
  return output;
}

std::string ShardedBackend::Engine::describe_unit(std::size_t u) const {
  for (const auto& [block, index] : unit_of_block_)
    if (index == u) return units_[u]->name() + " (" + block->name() + ")";
  return units_[u]->name();
}

std::string ShardedBackend::Engine::unit_in_backward() const {
  return in_backward_ == kNone ? std::string() : describe_unit(in_backward_);
}

void ShardedBackend::Engine::pre_forward(nn::BlockBase& block) {
  const auto u = unit_of(block);
  in_forward_.push_back(&block);
  units_[u]->unshard();
  if (!step_[u].forwarded) forward_order_.push_back(u);
  step_[u].forwarded = true;
  if (options_.prefetch) {
    for (std::size_t next = u + 1; next < units_.size(); ++next) {
      if (is_root_[next] || step_[next].forwarded) continue;
      units_[next]->start_gather();
      break;
    }
  }
}

void ShardedBackend::Engine::post_forward(nn::BlockBase& block, nn::TensorList& outputs) {
  const auto u = unit_of(block);
  if (!in_forward_.empty() && in_forward_.back() == &block) in_forward_.pop_back();
  if (torch::GradMode::is_enabled())
    for (auto& t : outputs)
      if (t.defined() && t.requires_grad()) t = PreBackward::apply(t, this, static_cast<std::int64_t>(u));
  if (options_.reshard_after_forward) units_[u]->reshard();
}

void ShardedBackend::Engine::pre_backward(std::size_t u) {
  queue_backward_end();
  auto& s = step_[u];
  if (s.pre_backward_done) return;
  s.pre_backward_done = true;
  in_backward_ = u;
  units_[u]->unshard();
  if (!options_.prefetch) return;
  // Prefetch the unit that ran before this one in forward: its backward comes next.
  for (std::size_t i = forward_order_.size(); i-- > 1;)
    if (forward_order_[i] == u) {
      units_[forward_order_[i - 1]]->start_gather();
      break;
    }
}

void ShardedBackend::Engine::grad_ready(std::size_t u, std::size_t param) {
  queue_backward_end();
  // ZeRO 1/2: each gradient moves into its bucket's reduction as it is produced, so that a
  // bucket's gradients (the whole model's at stage 1, in one bucket by default) are never held twice.
  // Not for gathered units: their input, made at the first gradient, would then live beside
  // the previous unit's reduction, which is finished only when this unit's starts.
  if (sync_ && !options_.shard_parameters) units_[u]->take_gradient(param);
  // With frozen parameters the last gradient may come before the unit's backward is over: its
  // inputs' gradients (input_grad_ready), or the end of backward for a unit whose inputs need
  // none (the first layer over frozen embeddings), say when it is.
  if (++step_[u].grads_seen == trainable_[u] && !has_frozen_[u]) post_backward(u);
}

void ShardedBackend::Engine::input_grad_ready(std::size_t u) {
  queue_backward_end();
  if (--step_[u].inputs_pending == 0) post_backward(u);
}

void ShardedBackend::Engine::post_backward(std::size_t u) {
  auto& s = step_[u];
  if (s.post_backward_done) return;
  s.post_backward_done = true;
  if (in_backward_ == u) in_backward_ = kNone;
  if (sync_) {
    // One reduction in flight: it overlaps the next unit's backward, and its buffers are
    // freed before the next one allocates (all units' at once would cost a model's worth).
    if (reducing_ != kNone) units_[reducing_]->finish_reduce(replicas());
    units_[u]->start_reduce(options_.reduce_scatter);
    reducing_ = u;
  }
  units_[u]->reshard();
}

void ShardedBackend::Engine::queue_backward_end() {
  if (end_queued_) return;
  end_queued_ = true;
  shardkit::queue_backward_end([this] { backward_end(); });
}

void ShardedBackend::Engine::backward_end() {
  // Units some of whose parameters got no gradient: what they got is reduced (the rest
  // counts as zeros), so that every rank issues the same collectives.
  for (std::size_t u = 0; u < units_.size(); ++u)
    if (!step_[u].post_backward_done && step_[u].grads_seen > 0) post_backward(u);
  for (auto& unit : units_) unit->reshard();
}

void ShardedBackend::Engine::finish_gradients() {
  if (!sync_) return;
  for (auto& unit : units_) unit->finish_reduce(replicas());
  reducing_ = kNone;
  if (whole_.empty() || world_->size() == 1) return;
  // Whole parameters are replicated on every rank: their gradients are averaged like ddp's.
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> grads;
  for (auto& [names, p] : whole_) {
    if (!p.requires_grad()) continue;
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    grads.push_back(p.grad());
  }
  if (grads.empty()) return;
  std::vector<torch::Tensor> flat_parts;
  for (const auto& g : grads) flat_parts.push_back(g.reshape({-1}));
  auto flat = torch::cat(flat_parts);
  shard::Stopwatch watch(own_times_.reduce_wait);
  CollectiveScope scope(options_.backend + ", whole parameters");
  world_->all_reduce(flat, ReduceOp::Avg);
  std::int64_t offset = 0;
  for (auto& g : grads) {
    g.view({-1}).copy_(flat.narrow(0, offset, g.numel()));
    offset += g.numel();
  }
}

double ShardedBackend::Engine::clip_grad_norm(double max_norm) {
  std::vector<torch::Tensor> sharded, whole;
  for (const auto& unit : units_)
    for (const auto& p : unit->params())
      if (p.trainable) sharded.push_back(p.local.grad());
  for (const auto& [names, p] : whole_)
    if (p.requires_grad()) whole.push_back(p.grad());
  // On the device the group's collectives run on (offloaded shards' gradients are in host memory).
  auto sum = torch::full({1}, local_grad_sq_norm(sharded), torch::kFloat64).to(collective_device());
  {
    shard::Stopwatch watch(own_times_.reduce_wait);
    CollectiveScope scope(options_.backend + ", gradient norm");
    shard_->all_reduce(sum, ReduceOp::Sum);
  }
  const double total_sq = sum.item<double>() + local_grad_sq_norm(whole);
  std::vector<torch::Tensor> all = sharded;
  all.insert(all.end(), whole.begin(), whole.end());
  return shardkit::clip_grad_norm(all, max_norm, [total_sq](double) { return total_sq; });
}

torch::Device ShardedBackend::Engine::collective_device() const {
  for (const auto& p : policy_->parameters()) return p.device();
  return torch::kCPU;
}

void ShardedBackend::Engine::after_optimizer_step() {
  // The first step's times (allocations, the optimizer's state) are left out of the summary.
  if (++timed_steps_ == 0) {
    own_times_ = shard::StepTimes{};
    for (auto& unit : units_) unit->reset_times();
  }
  refresh_whole_parameters();
}

void ShardedBackend::Engine::refresh_whole_parameters() {
  if (options_.shard_parameters) return;
  // Gathers into the parameters' own buffers need no room of ours: all are issued at once, so
  // that the transport goes from one to the next without waiting for this thread (Gloo's
  // worker threads, two by default, bound its flat copies in flight as before).
  if (std::all_of(units_.begin(), units_.end(), [](const auto& unit) { return unit->shard_in_whole(); })) {
    for (auto& unit : units_) unit->start_gather();
    for (auto& unit : units_) unit->refresh_whole();
    return;
  }
  // Otherwise one bucket's gather in flight while the one before finishes: all of them at once
  // would hold a second copy of the model (and Gloo's own as much again).
  for (std::size_t u = 0; u < units_.size(); ++u) {
    if (u + 1 < units_.size()) units_[u + 1]->start_gather();
    units_[u]->refresh_whole();
  }
}

std::vector<ParamShard> ShardedBackend::Engine::parameters() const {
  std::vector<ParamShard> params;
  for (const auto& unit : units_)
    for (const auto& p : unit->params())
      if (p.trainable) params.push_back({p.names.front(), p.local, p.layout, shard_replicas()});
  for (const auto& [names, p] : whole_)
    if (p.requires_grad()) params.push_back({names.front(), p, ShardLayout::whole(p.sizes().vec()), whole_replicas()});
  return params;
}

void ShardedBackend::Engine::model_state(ShardedState& state) const {
  for (const auto& unit : units_)
    for (const auto& p : unit->params())
      for (const auto& name : p.names) state.add("model." + name, p.local, p.layout, shard_replicas());
  for (const auto& [names, p] : whole_)
    for (const auto& name : names)
      state.add("model." + name, p.detach(), ShardLayout::whole(p.sizes().vec()), whole_replicas());
  for (const auto& item : policy_->named_buffers())
    state.add("model." + item.key(), item.value(), ShardLayout::whole(item.value().sizes().vec()), whole_replicas());
}

void ShardedBackend::Engine::model_state_loaded() {
  // The shards (fp32 masters) were loaded: whole parameters are refreshed from them.
  for (auto& unit : units_) unit->reshard();
  refresh_whole_parameters();
}

}  // namespace shardkit
