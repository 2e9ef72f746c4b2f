// The LibTorch-version-specific autograd calls: gradient-accumulator post hooks and final callbacks.
#include "shardkit/autograd_hooks.hpp"

#include <utility>

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include "shardkit/error.hpp"

namespace shardkit {

struct GradHookHandle::Impl {
  // Holding the accumulator is what keeps the hook: the parameter itself only keeps a
  // weak reference, and a new accumulator (without our hook) would be made next time.
  c10::intrusive_ptr<torch::autograd::Node> accumulator;
  std::uintptr_t key = 0;

  ~Impl() {
    if (accumulator) accumulator->del_post_hook(key);
  }
};

GradHookHandle::GradHookHandle() = default;
GradHookHandle::GradHookHandle(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GradHookHandle::~GradHookHandle() = default;
GradHookHandle::GradHookHandle(GradHookHandle&& other) noexcept = default;
GradHookHandle& GradHookHandle::operator=(GradHookHandle&& other) noexcept = default;
void GradHookHandle::reset() { impl_.reset(); }

GradHookHandle on_grad_accumulated(const torch::Tensor& param, std::function<void()> callback) {
  if (!param.defined() || !param.requires_grad() || !param.is_leaf())
    throw RuntimeError(
        "on_grad_accumulated needs a leaf tensor that requires grad (a parameter); got " +
        std::string(!param.defined()       ? "an undefined tensor"
                    : !param.requires_grad() ? "a tensor that does not require grad"
                                             : "a non-leaf tensor"));
  auto impl = std::make_unique<GradHookHandle::Impl>();
  impl->accumulator = torch::autograd::impl::grad_accumulator(param);
  if (!impl->accumulator)
    throw RuntimeError("on_grad_accumulated: LibTorch gave no gradient accumulator for the tensor");
  using torch::autograd::variable_list;
  auto hook = std::make_unique<torch::autograd::utils::LambdaPostHook>(
      [fn = std::move(callback)](const variable_list& outputs, const variable_list&) {
        fn();
        return outputs;
      });
  impl->key = impl->accumulator->add_post_hook(std::move(hook));
  return GradHookHandle(std::move(impl));
}

void queue_backward_end(std::function<void()> callback) {
  try {
    torch::autograd::Engine::get_default_engine().queue_callback(std::move(callback));
  } catch (const c10::Error& e) {
    throw RuntimeError(std::string("queue_backward_end can only be called while backward runs "
                                   "(from inside an autograd hook): ") +
                       e.what_without_backtrace());
  }
}

}  // namespace shardkit
