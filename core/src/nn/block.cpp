// Block hook plumbing and the search for wrap units in a module tree.
#include "shardkit/nn/block.hpp"

#include <algorithm>

#include "shardkit/error.hpp"

namespace shardkit::nn {

BlockBase::~BlockBase() = default;

namespace {

// Runs one hook; hooks may replace tensors but not change how many there are.
void run_hook(const std::function<void(BlockBase&, TensorList&)>& hook, BlockBase& block,
              TensorList& tensors, const char* what) {
  if (!hook) return;
  const auto count = tensors.size();
  hook(block, tensors);
  if (tensors.size() != count)
    throw RuntimeError(std::string("a ") + what + " hook of block " + block.name() +
                       " changed the number of tensors from " + std::to_string(count) + " to " +
                       std::to_string(tensors.size()));
}

}  // namespace

void BlockBase::run_pre(TensorList& inputs) {
  if (hooks_) run_hook(hooks_->pre_forward, *this, inputs, "pre-forward");
}

void BlockBase::run_post(TensorList& outputs) {
  if (hooks_) run_hook(hooks_->post_forward, *this, outputs, "post-forward");
}

torch::Tensor Block::forward_hooked(const torch::Tensor& input) {
  TensorList inputs{input};
  run_pre(inputs);
  TensorList outputs = run_impl(inputs);
  run_post(outputs);
  return outputs[0];
}

TensorList Block::forward_list(const TensorList& inputs) { return {forward_impl(inputs.at(0))}; }

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

std::vector<NamedBlock> outermost_blocks(const std::vector<NamedBlock>& blocks) {
  const auto inside = [](const std::string& name, const std::string& outer) {
    return name.size() > outer.size() && name.compare(0, outer.size(), outer) == 0 && name[outer.size()] == '.';
  };
  std::vector<NamedBlock> outer;
  for (const auto& b : blocks)
    if (std::none_of(outer.begin(), outer.end(), [&](const NamedBlock& o) { return inside(b.name, o.name); }))
      outer.push_back(b);
  return outer;
}

}  // namespace shardkit::nn
