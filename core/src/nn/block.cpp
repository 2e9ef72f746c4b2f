// Block hook plumbing and the search for wrap units in a module tree.
#include "shardkit/nn/block.hpp"

#include <algorithm>

#include "shardkit/error.hpp"

namespace shardkit::nn {

BlockBase::~BlockBase() = default;

void BlockBase::run_pre(TensorList& inputs) {
  if (hooks_ && hooks_->pre_forward) {
    const auto count = inputs.size();
    hooks_->pre_forward(*this, inputs);
    if (inputs.size() != count)
      throw RuntimeError("a pre-forward hook of block " + name() + " changed the number of inputs");
  }
}

void BlockBase::run_post(TensorList& outputs) {
  if (hooks_ && hooks_->post_forward) {
    const auto count = outputs.size();
    hooks_->post_forward(*this, outputs);
    if (outputs.size() != count)
      throw RuntimeError("a post-forward hook of block " + name() + " changed the number of outputs");
  }
}

torch::Tensor Block::forward_hooked(const torch::Tensor& input) {
  TensorList inputs{input};
  run_pre(inputs);
  TensorList outputs{forward_impl(inputs[0])};
  run_post(outputs);
  return outputs[0];
}

std::vector<NamedBlock> find_blocks(torch::nn::Module& root,
                                    const std::vector<std::string>& class_names) {
  std::vector<NamedBlock> found;
  for (const auto& item : root.named_modules(/*name_prefix=*/"", /*include_self=*/false)) {
    auto block = std::dynamic_pointer_cast<BlockBase>(item.value());
    if (!block) continue;
    if (!class_names.empty() &&
        std::find(class_names.begin(), class_names.end(), block->name()) == class_names.end())
      continue;
    found.push_back({item.key(), block});
  }
  return found;
}

}  // namespace shardkit::nn
