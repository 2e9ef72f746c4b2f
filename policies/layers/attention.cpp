// Multi-head attention with torch.nn.MultiheadAttention's parameters and arithmetic, and PEFT's
// LoRA adapters on it (see shardkit/nn/attention.hpp).
#include "shardkit/nn/attention.hpp"

#include <torch/nn/init.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "shardkit/error.hpp"
#include "shardkit/nn/dropout.hpp"
#include "shardkit/nn/lora_linear.hpp"

namespace shardkit::nn {
namespace {

/// (L, B, E) -> (B * heads, L, E / heads), as the Python function reshapes q, k and v.
torch::Tensor split_heads(const torch::Tensor& x, std::int64_t batch_heads, std::int64_t head_dim) {
  return x.reshape({x.size(0), batch_heads, head_dim}).transpose(0, 1);
}

/// `weight` with an adapter folded in: weight + B A * scaling (PEFT's get_delta_weight).
torch::Tensor with_adapter(const torch::Tensor& weight, const torch::nn::Linear& lora_A, const torch::nn::Linear& lora_B,
                           double scaling) {
  return weight + torch::matmul(lora_B->weight, lora_A->weight) * scaling;
}

/// PEFT's "base_layer" of a wrapped attention: here it holds out_proj's adapter (registered as
/// "out_proj.lora_A" / "out_proj.lora_B", PEFT's names) and the adapters' scaling, so that the
/// attention itself gains no members.
class PeftBaseLayer : public torch::nn::Module {
 public:
  explicit PeftBaseLayer(double scaling) : torch::nn::Module("PeftBaseLayer"), scaling(scaling) {}
  const double scaling;
};

/// `module`'s child `name` as a Linear, or an empty holder.
torch::nn::Linear linear_child(const torch::nn::Module& module, const std::string& name) {
  const auto children = module.named_children();
  const auto* child = children.find(name);
  if (!child) return torch::nn::Linear(nullptr);
  auto linear = std::dynamic_pointer_cast<torch::nn::LinearImpl>(*child);
  return linear ? torch::nn::Linear(linear) : torch::nn::Linear(nullptr);
}

}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(std::int64_t embed_dim, std::int64_t num_heads, double dropout)
    : embed_dim_(embed_dim), num_heads_(num_heads), dropout_(dropout) {
  if (embed_dim <= 0 || num_heads <= 0 || embed_dim % num_heads != 0)
    throw RuntimeError("multi-head attention: embed_dim (" + std::to_string(embed_dim) +
                       ") must be a positive multiple of num_heads (" + std::to_string(num_heads) + ")");
  reset();
}

void MultiheadAttentionImpl::reset() {
  // The order of torch::nn::MultiheadAttention's reset(), so a seed gives the same weights:
  // out_proj's Linear initialisation, then xavier for the packed projection, zero biases.
  in_proj_weight = register_parameter("in_proj_weight", torch::empty({3 * embed_dim_, embed_dim_}));
  in_proj_bias = register_parameter("in_proj_bias", torch::empty({3 * embed_dim_}));
  out_proj = register_module("out_proj", torch::nn::Linear(embed_dim_, embed_dim_));
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(in_proj_weight);
  in_proj_bias.zero_();
  out_proj->bias.zero_();
}

void enable_lora(MultiheadAttentionImpl& attention, std::int64_t r, double alpha) {
  if (lora_of(attention)) throw RuntimeError("LoRA is already enabled on this MultiheadAttention");
  const auto like = attention.in_proj_weight.options();
  const auto embed_dim = attention.in_proj_weight.size(1);
  register_lora_pair(attention, embed_dim, 3 * embed_dim, r, like);
  // PEFT wraps the attention and its out_proj, so the out_proj adapter is saved as
  // "<attn>.base_layer.out_proj.lora_A.weight": the same path here, holding the adapter alone
  // (the base out_proj keeps torch's name, "<attn>.out_proj").
  auto base_layer = attention.register_module(
      "base_layer", std::make_shared<PeftBaseLayer>(alpha / static_cast<double>(r)));
  auto out_holder = base_layer->register_module("out_proj", std::make_shared<torch::nn::Module>("PeftOutProjAdapter"));
  register_lora_pair(*out_holder, embed_dim, embed_dim, r, like);
  attention.in_proj_weight.set_requires_grad(false);
  attention.in_proj_bias.set_requires_grad(false);
  attention.out_proj->weight.set_requires_grad(false);
  if (attention.out_proj->bias.defined()) attention.out_proj->bias.set_requires_grad(false);
}

void MultiheadAttentionImpl::enable_lora(std::int64_t r, double alpha, double /*dropout*/) {
  shardkit::nn::enable_lora(*this, r, alpha);
}

std::string MultiheadAttentionImpl::lora_target_hint(const std::string& target, const std::string& module_name) const {
  const auto last = [](const std::string& name) {
    const auto dot = name.rfind('.');
    return dot == std::string::npos ? name : name.substr(dot + 1);
  };
  // The names a user reaches for, which torch's MultiheadAttention has no modules for: q, k and v
  // are packed, and out_proj's own forward is never called.
  const auto part = last(target);
  if (part != "q_proj" && part != "k_proj" && part != "v_proj" && part != "in_proj" && part != "in_proj_weight" &&
      part != "out_proj")
    return {};
  return "The attention here is torch's nn.MultiheadAttention (as in LeRobot's ACT): q, k and v are packed in "
         "one in_proj_weight and out_proj's own forward is never called, so PEFT adapts such an attention only "
         "whole; name the attention module (e.g. '" + last(module_name) +
         "') to put adapters on its in-projection and out_proj";
}

std::optional<AttentionLora> lora_of(const MultiheadAttentionImpl& attention) {
  const auto children = attention.named_children();
  const auto* base = children.find("base_layer");
  if (!base) return std::nullopt;
  const auto* peft = dynamic_cast<const PeftBaseLayer*>(base->get());
  const auto holders = (*base)->named_children();
  const auto* out = holders.find("out_proj");
  if (!peft || !out) return std::nullopt;
  AttentionLora lora{linear_child(attention, "lora_A"), linear_child(attention, "lora_B"),
                     linear_child(**out, "lora_A"), linear_child(**out, "lora_B"), peft->scaling};
  if (lora.in_A.is_empty() || lora.in_B.is_empty() || lora.out_A.is_empty() || lora.out_B.is_empty())
    return std::nullopt;
  return lora;
}

torch::Tensor MultiheadAttentionImpl::forward(const torch::Tensor& query, const torch::Tensor& key,
                                              const torch::Tensor& value, const torch::Tensor& key_padding_mask) {
  const auto tgt_len = query.size(0), batch = query.size(1), src_len = key.size(0);
  const auto head_dim = embed_dim_ / num_heads_;
  // With LoRA, the adapters folded into the weights for this call, as PEFT's forward merges them.
  const auto lora = lora_of(*this);
  const auto in_weight = lora ? with_adapter(in_proj_weight, lora->in_A, lora->in_B, lora->scaling) : in_proj_weight;
  torch::Tensor q, k, v;
  if (key.is_same(value) && query.is_same(key)) {
    const auto chunks = torch::linear(query, in_weight, in_proj_bias).chunk(3, -1);
    std::tie(q, k, v) = std::make_tuple(chunks[0], chunks[1], chunks[2]);
  } else if (key.is_same(value)) {
    const auto w = in_weight.split_with_sizes({embed_dim_, 2 * embed_dim_});
    const auto b = in_proj_bias.split_with_sizes({embed_dim_, 2 * embed_dim_});
    q = torch::linear(query, w[0], b[0]);
    const auto kv = torch::linear(key, w[1], b[1]).chunk(2, -1);
    std::tie(k, v) = std::make_tuple(kv[0], kv[1]);
  } else {
    const auto w = in_weight.chunk(3);
    const auto b = in_proj_bias.chunk(3);
    q = torch::linear(query, w[0], b[0]);
    k = torch::linear(key, w[1], b[1]);
    v = torch::linear(value, w[2], b[2]);
  }
  const auto batch_heads = batch * num_heads_;
  q = split_heads(q, batch_heads, head_dim);
  k = split_heads(k, batch_heads, head_dim);
  v = split_heads(v, batch_heads, head_dim);

  const auto q_scaled = q * std::sqrt(1.0 / static_cast<double>(head_dim));
  torch::Tensor scores;
  if (key_padding_mask.defined()) {
    const auto mask = torch::zeros({batch, src_len}, q.options())
                          .masked_fill_(key_padding_mask, -std::numeric_limits<double>::infinity())
                          .view({batch, 1, 1, src_len})
                          .expand({-1, num_heads_, -1, -1})
                          .reshape({batch_heads, 1, src_len});
    scores = torch::baddbmm(mask, q_scaled, k.transpose(-2, -1));
  } else {
    scores = torch::bmm(q_scaled, k.transpose(-2, -1));
  }
  auto probs = shardkit::nn::dropout(torch::softmax(scores, -1), dropout_, is_training());
  auto out = torch::bmm(probs, v).transpose(0, 1).contiguous().view({tgt_len * batch, embed_dim_});
  if (lora)
    return torch::linear(out, with_adapter(out_proj->weight, lora->out_A, lora->out_B, lora->scaling), out_proj->bias)
        .view({tgt_len, batch, embed_dim_});
  return out_proj(out).view({tgt_len, batch, embed_dim_});
}

}  // namespace shardkit::nn
