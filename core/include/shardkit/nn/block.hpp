// shardkit::nn::Block: the base class of wrap units, whose forward runs a backend's hooks.
//
// LibTorch modules have no forward hooks, and module holders and Sequential call
// `forward` directly, so the hook point must be `forward` itself: Block::forward is a
// non-virtual wrapper that runs the installed pre/post hooks around the virtual
// forward_impl() a policy writes. Without hooks it costs one branch.
//
//   struct MyBlockImpl : shardkit::nn::Block {
//     MyBlockImpl() { fc = register_module("fc", torch::nn::Linear(8, 8)); }
//     torch::Tensor forward_impl(const torch::Tensor& x) override { return x + fc(x); }
//     torch::nn::Linear fc{nullptr};
//   };
//   TORCH_MODULE(MyBlock);  // MyBlock{}(x) and Sequential(MyBlock{}) both run the hooks
//
// A block may also be activation-checkpointed (set_activation_checkpointing, or
// shardkit/nn/activation_checkpointing.hpp for a model's wrap units): its forward then keeps only
// its inputs and runs forward_impl again in backward, between the hooks' pre and post parts.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>

namespace shardkit::nn {

/// Inputs or outputs of a block, flattened.
using TensorList = std::vector<torch::Tensor>;

class BlockBase;

/// Hooks a backend installs on a block. Either may be empty. They may replace tensors in
/// the list (cast inputs, attach backward functions to outputs) but not change its length.
struct BlockHooks {
  std::function<void(BlockBase&, TensorList&)> pre_forward;   ///< before forward_impl
  std::function<void(BlockBase&, TensorList&)> post_forward;  ///< after forward_impl
};

/// Common part of Block and ListBlock: hook storage.
class BlockBase : public torch::nn::Module {
 public:
  BlockBase() = default;
  /// `class_name` is what Module::name() reports and what wrap_modules() lists.
  explicit BlockBase(std::string class_name) : torch::nn::Module(std::move(class_name)) {}
  ~BlockBase() override;
  /// Installs hooks (nullptr removes them). Shared so one set can serve many blocks.
  void set_hooks(std::shared_ptr<const BlockHooks> hooks) { hooks_ = std::move(hooks); }
  /// True when hooks are installed.
  bool has_hooks() const { return hooks_ != nullptr; }
  /// Activation checkpointing: while gradients are recorded, forward saves only the block's
  /// inputs (not what forward_impl computes from them) and backward runs forward_impl again,
  /// with the random generators' state of the first run (dropout draws the same masks) and
  /// the same autocast state, to get the gradients. Costs one more forward_impl per backward.
  /// forward_impl may use the block's own parameters and buffers and its inputs only.
  void set_activation_checkpointing(bool on) { checkpointing_ = on; }
  bool activation_checkpointing() const { return checkpointing_; }

 protected:
  void run_pre(TensorList& inputs);
  void run_post(TensorList& outputs);
  /// forward_impl on the flattened inputs, checkpointed when that is on and gradients are recorded.
  TensorList run_impl(const TensorList& inputs);
  /// forward_impl, on flattened inputs and outputs.
  virtual TensorList forward_list(const TensorList& inputs) = 0;
  std::shared_ptr<const BlockHooks> hooks_;
  bool checkpointing_ = false;

 private:
  friend struct CheckpointedForward;
};

/// A wrap unit with one tensor in and one tensor out.
class Block : public BlockBase {
 public:
  using BlockBase::BlockBase;
  /// Runs the hooks around forward_impl(). Deliberately not virtual.
  torch::Tensor forward(const torch::Tensor& input) {
    if (!hooks_ && !checkpointing_) return forward_impl(input);
    return forward_hooked(input);
  }

 protected:
  /// The block's computation, written by the policy.
  virtual torch::Tensor forward_impl(const torch::Tensor& input) = 0;

 private:
  torch::Tensor forward_hooked(const torch::Tensor& input);
  TensorList forward_list(const TensorList& inputs) final;
};

/// A wrap unit with several tensors in and out (e.g. hidden states plus a mask).
class ListBlock : public BlockBase {
 public:
  using BlockBase::BlockBase;
  /// Runs the hooks around forward_impl(). Deliberately not virtual.
  TensorList forward(TensorList inputs) {
    if (!hooks_ && !checkpointing_) return forward_impl(inputs);
    run_pre(inputs);
    TensorList outputs = run_impl(inputs);
    run_post(outputs);
    return outputs;
  }

 protected:
  /// The block's computation, written by the policy.
  virtual TensorList forward_impl(const TensorList& inputs) = 0;

 private:
  TensorList forward_list(const TensorList& inputs) final { return forward_impl(inputs); }
};

/// A block found in a module tree: its dotted name from the root and the module.
struct NamedBlock {
  std::string name;
  std::shared_ptr<BlockBase> block;
};

/// Every Block/ListBlock under `root` (depth first, registration order) whose class
/// name (Module::name()) is in `class_names`, or every block when `class_names` is empty.
std::vector<NamedBlock> find_blocks(torch::nn::Module& root,
                                    const std::vector<std::string>& class_names = {});

/// The blocks of `blocks` (as find_blocks lists them) that lie inside no other block of the list:
/// of nested wrap blocks, the outermost one is the unit.
std::vector<NamedBlock> outermost_blocks(const std::vector<NamedBlock>& blocks);

}  // namespace shardkit::nn
