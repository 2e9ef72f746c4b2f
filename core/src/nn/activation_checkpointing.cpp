// Activation checkpointing: the autograd function that recomputes a block's forward in backward,
// and the choice of checkpointed blocks.
#include "shardkit/nn/activation_checkpointing.hpp"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <torch/autograd.h>

#include <algorithm>
#include <cstdint>
#include <mutex>

#include "shardkit/error.hpp"
#include "shardkit/nn/block.hpp"

namespace shardkit::nn {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// The default generators of the devices a block's forward may draw from (the CPU's, and the
/// CUDA devices its tensors are on), with their states.
struct RngStates {
  std::vector<at::Generator> generators;
  std::vector<torch::Tensor> states;

  static RngStates of(const TensorList& inputs, const std::vector<torch::Tensor>& params) {
    std::vector<c10::Device> devices{c10::Device(c10::kCPU)};
    for (const auto* list : {&inputs, &params})
      for (const auto& t : *list)
        if (t.defined() && std::find(devices.begin(), devices.end(), t.device()) == devices.end())
          devices.push_back(t.device());
    RngStates s;
    for (const auto& device : devices) {
      auto generator = at::globalContext().defaultGenerator(device);
      std::lock_guard<std::mutex> lock(generator.mutex());
      s.states.push_back(generator.get_state());
      s.generators.push_back(std::move(generator));
    }
    return s;
  }
  void restore() {
    for (std::size_t i = 0; i < generators.size(); ++i) {
      std::lock_guard<std::mutex> lock(generators[i].mutex());
      generators[i].set_state(states[i]);
    }
  }
};

/// Autocast's state for the device types a model runs on: the recompute runs as forward did.
struct AutocastState {
  static constexpr c10::DeviceType kTypes[] = {c10::DeviceType::CPU, c10::DeviceType::CUDA};
  bool enabled[2] = {false, false};
  at::ScalarType dtype[2] = {at::kBFloat16, at::kHalf};

  static AutocastState now() {
    AutocastState s;
    for (int i = 0; i < 2; ++i) {
      s.enabled[i] = at::autocast::is_autocast_enabled(kTypes[i]);
      s.dtype[i] = at::autocast::get_autocast_dtype(kTypes[i]);
    }
    return s;
  }
  void apply() const {
    for (int i = 0; i < 2; ++i) {
      at::autocast::set_autocast_enabled(kTypes[i], enabled[i]);
      at::autocast::set_autocast_dtype(kTypes[i], dtype[i]);
    }
  }
};

/// Sets autocast as `wanted` for a scope, and back after it (dropping the casts it cached).
class AutocastScope {
 public:
  explicit AutocastScope(const AutocastState& wanted) : previous_(AutocastState::now()) {
    wanted.apply();
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    previous_.apply();
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  AutocastState previous_;
};

/// The block's parameters that get gradients, in a fixed order: the checkpointed function's
/// inputs after the block's own, so that their gradients reach autograd's accumulators (and the
/// backends' hooks on them) in the backward pass that runs the function.
std::vector<torch::Tensor> trainable_parameters(BlockBase& block) {
  std::vector<torch::Tensor> params;
  for (const auto& p : block.parameters())
    if (p.requires_grad()) params.push_back(p);
  return params;
}

std::int64_t as_int(const BlockBase* block) { return static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(block)); }
BlockBase* as_block(std::int64_t value) { return reinterpret_cast<BlockBase*>(static_cast<std::intptr_t>(value)); }

}  // namespace

/// forward_impl without the activations: `tensors` holds the block's inputs, then its trainable
/// parameters (they are inputs so that autograd sends their gradients to their accumulators in
/// the backward pass that runs this; the forward reads them from the block).
struct CheckpointedForward : torch::autograd::Function<CheckpointedForward> {
  static variable_list forward(AutogradContext* ctx, torch::TensorList tensors, std::int64_t block_address,
                               const std::vector<bool>& defined_inputs, std::vector<bool>* defined_outputs) {
    auto* block = as_block(block_address);
    // Undefined inputs (an absent mask) do not cross autograd's function boundary: they are
    // put back where the block expects them.
    TensorList inputs;
    auto given = tensors.begin();
    for (const bool defined : defined_inputs) inputs.push_back(defined ? *given++ : torch::Tensor());
    const std::vector<torch::Tensor> params(given, tensors.end());
    auto rng = RngStates::of(inputs, params);
    const auto autocast = AutocastState::now();
    ctx->saved_data["block"] = block_address;
    ctx->saved_data["num_params"] = static_cast<std::int64_t>(params.size());
    ctx->saved_data["autocast"] = std::vector<std::int64_t>{autocast.enabled[0], autocast.enabled[1],
                                                            static_cast<std::int64_t>(autocast.dtype[0]),
                                                            static_cast<std::int64_t>(autocast.dtype[1])};
    ctx->saved_data["rng_states"] = rng.states;
    ctx->save_for_backward(inputs);
    ctx->saved_data["num_given"] = static_cast<std::int64_t>(tensors.size());
    // Likewise undefined outputs: the caller puts them back (defined_outputs).
    variable_list outputs;
    for (auto& t : block->forward_list(inputs)) {
      defined_outputs->push_back(t.defined());
      if (t.defined()) outputs.push_back(std::move(t));
    }
    return outputs;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto* block = as_block(ctx->saved_data["block"].toInt());
    const auto saved = ctx->get_saved_variables();
    const auto num_params = ctx->saved_data["num_params"].toInt();
    const auto params = trainable_parameters(*block);
    if (static_cast<std::int64_t>(params.size()) != num_params)
      throw RuntimeError("activation checkpointing of block " + block->name() + ": it had " +
                         std::to_string(num_params) + " trainable parameters in forward and has " +
                         std::to_string(params.size()) + " in backward; change requires_grad between steps only");

    TensorList inputs;
    for (const auto& x : saved) {
      if (!x.defined()) {
        inputs.emplace_back();
        continue;
      }
      auto d = x.detach();
      d.requires_grad_(x.requires_grad());
      inputs.push_back(std::move(d));
    }

    // The recompute draws the random numbers the first forward drew, and leaves the generators
    // where backward found them. The same inputs and parameters give the same generators, in the
    // order forward saved their states.
    auto later = RngStates::of(inputs, params);
    RngStates first{later.generators, ctx->saved_data["rng_states"].toTensorVector()};
    AutocastState autocast;
    const auto a = ctx->saved_data["autocast"].toIntVector();
    autocast.enabled[0] = a[0] != 0;
    autocast.enabled[1] = a[1] != 0;
    autocast.dtype[0] = static_cast<at::ScalarType>(a[2]);
    autocast.dtype[1] = static_cast<at::ScalarType>(a[3]);

    TensorList outputs;
    first.restore();
    try {
      torch::AutoGradMode grad_mode(true);
      AutocastScope autocast_scope(autocast);
      outputs = block->forward_list(inputs);
    } catch (...) {
      later.restore();
      throw;
    }
    later.restore();

    // grad_outputs has one gradient per defined output of the first forward.
    std::vector<torch::Tensor> roots, root_grads;
    std::size_t defined_index = 0;
    for (const auto& out : outputs) {
      if (!out.defined()) continue;
      const auto i = defined_index++;
      if (i < grad_outputs.size() && out.requires_grad() && grad_outputs[i].defined()) {
        roots.push_back(out);
        root_grads.push_back(grad_outputs[i]);
      }
    }
    std::vector<torch::Tensor> wrt;
    std::vector<std::size_t> slot;  // where each of wrt's gradients goes in the result
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].defined() && inputs[i].requires_grad()) {
        wrt.push_back(inputs[i]);
        slot.push_back(i);
      }
    for (std::size_t i = 0; i < params.size(); ++i) {
      wrt.push_back(params[i]);
      slot.push_back(inputs.size() + i);
    }
    // One gradient per tensor given to apply() (the defined inputs, then the parameters), then
    // none for the three other arguments.
    variable_list result(static_cast<std::size_t>(ctx->saved_data["num_given"].toInt()) + 3);
    if (roots.empty() || wrt.empty()) return result;
    const auto grads = torch::autograd::grad(roots, wrt, root_grads, /*retain_graph=*/false,
                                             /*create_graph=*/false, /*allow_unused=*/true);
    std::vector<std::size_t> given_slot(inputs.size() + params.size());
    std::size_t next = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].defined()) given_slot[i] = next++;
    for (std::size_t i = 0; i < params.size(); ++i) given_slot[inputs.size() + i] = next++;
    for (std::size_t i = 0; i < grads.size(); ++i) result[given_slot[slot[i]]] = grads[i];
    return result;
  }
};

TensorList BlockBase::run_impl(const TensorList& inputs) {
  if (!checkpointing_ || !torch::GradMode::is_enabled()) return forward_list(inputs);
  auto params = trainable_parameters(*this);
  const bool needs_grad =
      !params.empty() || std::any_of(inputs.begin(), inputs.end(),
                                     [](const torch::Tensor& t) { return t.defined() && t.requires_grad(); });
  if (!needs_grad) return forward_list(inputs);
  std::vector<torch::Tensor> tensors;
  std::vector<bool> defined;
  for (const auto& t : inputs) {
    defined.push_back(t.defined());
    if (t.defined()) tensors.push_back(t);
  }
  tensors.insert(tensors.end(), params.begin(), params.end());
  std::vector<bool> defined_outputs;
  auto given = CheckpointedForward::apply(torch::TensorList(tensors), as_int(this), defined, &defined_outputs);
  TensorList outputs;
  auto next = given.begin();
  for (const bool d : defined_outputs) outputs.push_back(d ? std::move(*next++) : torch::Tensor());
  return outputs;
}

CheckpointingMode parse_checkpointing_mode(const std::string& text, const std::string& option) {
  if (text == "none") return CheckpointingMode::None;
  if (text == "full") return CheckpointingMode::Full;
  if (text == "selective") return CheckpointingMode::Selective;
  throw ConfigError(option + "=" + text + ": expected none, full (every wrap unit) or selective (every k-th)");
}

const char* checkpointing_mode_name(CheckpointingMode mode) {
  switch (mode) {
    case CheckpointingMode::Full: return "full";
    case CheckpointingMode::Selective: return "selective";
    case CheckpointingMode::None: break;
  }
  return "none";
}

std::vector<std::string> checkpoint_blocks(torch::nn::Module& root, const std::vector<std::string>& classes,
                                           CheckpointingMode mode, std::int64_t every) {
  if (every < 1) throw ConfigError("activation checkpointing every " + std::to_string(every) + " blocks: give 1 or more");
  for (const auto& found : find_blocks(root)) found.block->set_activation_checkpointing(false);
  std::vector<std::string> names;
  if (mode == CheckpointingMode::None || classes.empty()) return names;
  const auto step = mode == CheckpointingMode::Full ? 1 : every;
  std::int64_t count = 0;
  for (const auto& found : outermost_blocks(find_blocks(root, classes))) {
    if (++count % step != 0) continue;
    found.block->set_activation_checkpointing(true);
    names.push_back(found.name);
  }
  return names;
}

}  // namespace shardkit::nn
