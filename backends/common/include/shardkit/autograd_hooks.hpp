// Autograd hooks backends need, behind one small compatibility layer over LibTorch internals.
//
// Tensor::register_hook runs before a leaf's gradient is accumulated into .grad(), which is
// too early for gradient communication. These calls hook the parameter's gradient
// accumulator instead (as PyTorch's DDP reducer does), and queue work for the end of the
// backward pass. Only core/src/compat/autograd_hooks.cpp includes torch/csrc internals.
//
//   auto handle = shardkit::on_grad_accumulated(param, [&] {
//     send(param.grad());                       // .grad() already holds the new sum
//     shardkit::queue_backward_end([&] { finish(); });
//   });
#pragma once

#include <functional>
#include <memory>

#include <torch/types.h>

namespace shardkit {

/// Keeps a grad-accumulated hook installed. Destroying (or reset()) removes the hook and
/// releases the accumulator it kept alive. Do not destroy it while a backward pass that
/// may run the hook is in progress. Movable, not copyable.
class GradHookHandle {
 public:
  /// An empty handle (no hook).
  GradHookHandle();
  ~GradHookHandle();
  GradHookHandle(GradHookHandle&& other) noexcept;
  GradHookHandle& operator=(GradHookHandle&& other) noexcept;
  GradHookHandle(const GradHookHandle&) = delete;
  GradHookHandle& operator=(const GradHookHandle&) = delete;

  /// Removes the hook now (no-op on an empty handle).
  void reset();
  /// Whether a hook is installed.
  bool active() const { return impl_ != nullptr; }

  struct Impl;  ///< defined in the compatibility layer

 private:
  explicit GradHookHandle(std::unique_ptr<Impl> impl);
  friend GradHookHandle on_grad_accumulated(const torch::Tensor&, std::function<void()>);
  std::unique_ptr<Impl> impl_;
};

/// Runs `callback` each time backward has accumulated a gradient into `param.grad()`
/// (once per backward pass that reaches `param`), on the thread running that part of
/// backward. `param` must be a leaf that requires grad (else shardkit::RuntimeError).
/// An exception thrown by `callback` makes that backward() call throw it.
GradHookHandle on_grad_accumulated(const torch::Tensor& param, std::function<void()> callback);

/// Queues `callback` to run once when the current backward pass has finished all its
/// work (before backward() returns). Only valid while backward runs, i.e. from inside a
/// hook; elsewhere throws shardkit::RuntimeError.
void queue_backward_end(std::function<void()> callback);

}  // namespace shardkit
