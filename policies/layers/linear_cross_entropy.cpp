// The fused output layer and cross-entropy (see linear_cross_entropy.hpp).
#include "shardkit/nn/linear_cross_entropy.hpp"

#include <ATen/autocast_mode.h>
#include <torch/autograd.h>

#include <algorithm>

namespace shardkit::nn {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// Rows per chunk: the logits of one chunk in about `budget` bytes of float32. Every chunk reads
/// the whole (V x H) weight twice (and adds into its gradient when that is wanted), so chunks are
/// made large: small ones would move the weight through memory more often than the logits.
std::int64_t chunk_rows(std::int64_t rows, std::int64_t vocab, bool cuda) {
  const std::int64_t budget = cuda ? (std::int64_t{1} << 30) : (std::int64_t{256} << 20);
  return std::clamp<std::int64_t>(budget / (4 * std::max<std::int64_t>(vocab, 1)), 1, std::max<std::int64_t>(rows, 1));
}

class LinearCrossEntropy : public torch::autograd::Function<LinearCrossEntropy> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& hidden, const torch::Tensor& weight,
                               const torch::Tensor& targets, std::int64_t ignore_index, std::int64_t max_chunk_rows) {
    const bool hidden_grad = hidden.requires_grad(), weight_grad = weight.requires_grad();
    const auto rows = hidden.size(0), vocab = weight.size(0);
    const auto f32 = hidden.options().dtype(torch::kFloat32);
    auto loss = torch::zeros({}, f32);
    torch::Tensor grad_hidden, grad_weight;
    if (hidden_grad) grad_hidden = torch::empty_like(hidden, at::MemoryFormat::Contiguous);
    const auto h = hidden.contiguous();
    auto step = chunk_rows(rows, vocab, hidden.is_cuda());
    if (max_chunk_rows > 0) step = std::min(step, max_chunk_rows);
    // A low-precision weight's gradient sums its chunks' float32 products, rounded once at the end.
    const bool sum_in_f32 = weight_grad && weight.scalar_type() != torch::kFloat32 && step < rows;
    if (weight_grad)
      grad_weight = torch::zeros(weight.sizes(), weight.options().dtype(sum_in_f32 ? torch::kFloat32 : weight.scalar_type()));
    for (std::int64_t start = 0; start < rows; start += step) {
      const auto n = std::min(step, rows - start);
      const auto h_chunk = h.narrow(0, start, n);
      const auto t_chunk = targets.narrow(0, start, n);
      // The log-softmax is made in the logits' own buffer, row by row (a row of logits fits in
      // cache; the kernels finish a row's max and sum before they write it, on the CPU and on
      // CUDA), where logsumexp and a subtraction made a temporary of the logits' size and
      // passed over the whole of them five times.
      auto logp = torch::mm(h_chunk, weight.t()).to(torch::kFloat32);
      at::_log_softmax_out(logp, logp, 1, false);
      const auto valid = t_chunk.ne(ignore_index);
      const auto ignored = valid.logical_not();
      const auto safe = t_chunk.masked_fill(ignored, 0).unsqueeze(1);
      loss.sub_(logp.gather(1, safe).squeeze(1).masked_fill(ignored, 0).sum());
      if (!hidden_grad && !weight_grad) continue;
      // d loss / d logits = softmax - one_hot(target), zero on ignored rows: made in place.
      auto grad = logp.exp_();
      grad.scatter_add_(1, safe, -valid.to(torch::kFloat32).unsqueeze(1));
      if (grad.is_cpu()) {  // only the ignored rows (finding them waits for a GPU: there, a pass)
        const auto rows_ignored = ignored.nonzero().squeeze(1);
        if (rows_ignored.numel() > 0) grad.index_fill_(0, rows_ignored, 0.0);
      } else {
        grad.masked_fill_(ignored.unsqueeze(1), 0.0);
      }
      const auto g = grad.to(hidden.scalar_type());
      if (hidden_grad) {
        auto out = grad_hidden.narrow(0, start, n);
        torch::mm_out(out, g, weight);
      }
      if (sum_in_f32)
        grad_weight.addmm_(grad.t(), h_chunk.to(torch::kFloat32));
      else if (weight_grad)
        grad_weight.addmm_(g.t(), h_chunk);
    }
    if (sum_in_f32) grad_weight = grad_weight.to(weight.scalar_type());
    ctx->saved_data["grad_hidden"] = grad_hidden;
    ctx->saved_data["grad_weight"] = grad_weight;
    return loss;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto& g = grad_outputs[0];
    // The stored gradients are scaled in place and handed over: a second backward has nothing.
    TORCH_CHECK(ctx->saved_data.count("grad_hidden"),
                "linear_cross_entropy: backward through the same loss twice (retain_graph) is not supported");
    auto grad_hidden = ctx->saved_data["grad_hidden"].toTensor();
    auto grad_weight = ctx->saved_data["grad_weight"].toTensor();
    ctx->saved_data.clear();
    if (grad_hidden.defined()) grad_hidden.mul_(g);
    if (grad_weight.defined()) grad_weight.mul_(g);
    return {grad_hidden, grad_weight, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

bool linear_cross_entropy_applies(const torch::Tensor& hidden, const torch::Tensor& weight) {
  return hidden.dim() == 2 && weight.dim() == 2 && hidden.scalar_type() == weight.scalar_type() &&
         hidden.device() == weight.device() && !at::autocast::is_autocast_enabled(hidden.device().type());
}

torch::Tensor linear_cross_entropy(const torch::Tensor& hidden, const torch::Tensor& weight,
                                   const torch::Tensor& targets, std::int64_t ignore_index,
                                   std::int64_t max_chunk_rows) {
  // Without grad mode (evaluation), no gradient is made, whatever requires_grad says.
  if (!torch::GradMode::is_enabled())
    return LinearCrossEntropy::apply(hidden.detach(), weight.detach(), targets.to(torch::kLong), ignore_index,
                                     max_chunk_rows);
  return LinearCrossEntropy::apply(hidden, weight, targets.to(torch::kLong), ignore_index, max_chunk_rows);
}

}  // namespace shardkit::nn
