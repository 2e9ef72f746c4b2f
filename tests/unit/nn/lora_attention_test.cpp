// LoRA on shardkit::nn::MultiheadAttention (PEFT's lora.MultiheadAttention): a fresh adapter
// changes nothing, the output is the attention with B A * alpha / r folded into in_proj_weight and
// out_proj.weight, gradients reach only the adapters, the names are PEFT's; apply_lora adapts an
// attention only when named, explains q_proj/out_proj, and refuses to train nothing; merging folds
// the attention's adapters into in_proj_weight and out_proj.weight.
#include <torch/torch.h>
#undef CHECK  // glog's CHECK (pulled in by LibTorch) would shadow Catch2's
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <shardkit/error.hpp>
#include <shardkit/nn/attention.hpp>
#include <shardkit/nn/lora_linear.hpp>
#include "../../../apps/shardkit-train/src/peft.hpp"

namespace {

using shardkit::nn::LoraLinear;
using shardkit::nn::MultiheadAttention;
using shardkit::nn::enable_lora;
using shardkit::nn::lora_of;

/// A copy of `from`'s weights in a fresh attention (no adapters).
MultiheadAttention copy_of(const MultiheadAttention& from, std::int64_t dim, std::int64_t heads) {
  MultiheadAttention to(dim, heads, 0.0);
  torch::NoGradGuard no_grad;
  to->in_proj_weight.copy_(from->in_proj_weight);
  to->in_proj_bias.copy_(from->in_proj_bias);
  to->out_proj->weight.copy_(from->out_proj->weight);
  to->out_proj->bias.copy_(from->out_proj->bias);
  return to;
}

// One encoder-like layer with an attention and a feed-forward linear, optionally without the linear.
struct AttnNetImpl : torch::nn::Module {
  explicit AttnNetImpl(bool with_linear) {
    auto layer = std::make_shared<torch::nn::Module>();
    layer->register_module("self_attn", MultiheadAttention(8, 2, 0.0));
    if (with_linear) layer->register_module("linear1", LoraLinear(8, 16, true));
    layers->push_back(layer);
    register_module("layers", layers);
  }
  torch::nn::ModuleList layers;
};
TORCH_MODULE(AttnNet);

shardkit::LoraOptions lora(std::vector<std::string> targets) {
  shardkit::LoraOptions o;
  o.r = 2;
  o.lora_alpha = 4;
  o.target_modules = std::move(targets);
  return o;
}

std::string refusal(AttnNet& net, const shardkit::LoraOptions& options) {
  try {
    shardkit::apply_lora(*net, options);
  } catch (const shardkit::ConfigError& e) {
    return e.what();
  }
  FAIL("no error");
  return "";
}

}  // namespace

TEST_CASE("attention with LoRA computes the attention with the adapters folded into its weights", "[nn][lora]") {
  torch::manual_seed(4);
  MultiheadAttention attention(16, 4, 0.0);
  auto reference = copy_of(attention, 16, 4);
  const auto x = torch::randn({5, 2, 16});
  const auto memory = torch::randn({3, 2, 16});
  const auto qk = x + torch::randn({5, 1, 16});
  const auto before = attention(qk, qk, x);
  CHECK_FALSE(lora_of(*attention));
  enable_lora(*attention, 4, 8.0);
  REQUIRE(lora_of(*attention));
  const auto lora = *lora_of(*attention);
  CHECK(lora.scaling == 2.0);
  CHECK(torch::equal(attention(qk, qk, x), before));  // B = 0: nothing changes

  // PEFT's names: the in-projection's adapter on the attention, out_proj's under base_layer.out_proj.
  std::set<std::string> trainable;
  for (const auto& p : attention->named_parameters())
    if (p.value().requires_grad()) trainable.insert(p.key());
  CHECK(trainable == std::set<std::string>{"lora_A.weight", "lora_B.weight", "base_layer.out_proj.lora_A.weight",
                                           "base_layer.out_proj.lora_B.weight"});
  CHECK(lora.in_B->weight.sizes().vec() == std::vector<std::int64_t>{48, 4});
  CHECK(lora.out_B->weight.sizes().vec() == std::vector<std::int64_t>{16, 4});

  {
    torch::NoGradGuard no_grad;
    lora.in_B->weight.normal_();
    lora.out_B->weight.normal_();
    reference->in_proj_weight.add_(torch::matmul(lora.in_B->weight, lora.in_A->weight) * 2.0);
    reference->out_proj->weight.add_(torch::matmul(lora.out_B->weight, lora.out_A->weight) * 2.0);
  }
  attention->train();  // the adapters' result does not depend on the mode
  CHECK(torch::allclose(attention(qk, qk, x), reference(qk, qk, x), 1e-5, 1e-5));
  CHECK(torch::allclose(attention(x, x, x), reference(x, x, x), 1e-5, 1e-5));
  CHECK(torch::allclose(attention(qk, memory, memory), reference(qk, memory, memory), 1e-5, 1e-5));

  attention(qk, qk, x).pow(2).sum().backward();
  CHECK(lora.in_A->weight.grad().defined());
  CHECK(lora.out_A->weight.grad().defined());
  CHECK_FALSE(attention->in_proj_weight.grad().defined());
  CHECK_FALSE(attention->out_proj->weight.grad().defined());
  CHECK_THROWS_AS(enable_lora(*attention, 4, 8.0), shardkit::RuntimeError);
}

TEST_CASE("apply_lora adapts an attention only when named; q_proj, out_proj and training nothing are refused",
          "[nn][lora]") {
  {
    AttnNet net(true);
    const auto summary = shardkit::apply_lora(*net, lora({"self_attn"}));
    CHECK(summary.adapted == std::vector<std::string>{"layers.0.self_attn"});
    CHECK(summary.adapter_parameters ==
          std::set<std::string>{"layers.0.self_attn.lora_A.weight", "layers.0.self_attn.lora_B.weight",
                                "layers.0.self_attn.base_layer.out_proj.lora_A.weight",
                                "layers.0.self_attn.base_layer.out_proj.lora_B.weight"});
    CHECK(summary.trainable == summary.adapter_parameters);
    CHECK(summary.trainable_numel == (2 * 8 + 24 * 2) + (2 * 8 + 8 * 2));
  }
  {
    // all-linear is PEFT's: Linear modules only.
    AttnNet net(true);
    const auto summary = shardkit::apply_lora(*net, lora({"all-linear"}));
    CHECK(summary.adapted == std::vector<std::string>{"layers.0.linear1"});
  }
  {
    AttnNet net(true);
    const auto message = refusal(net, lora({"q_proj", "v_proj"}));
    INFO(message);
    CHECK(message.find("--peft.target_modules=q_proj,v_proj: 'q_proj' matches no module of the policy, 'v_proj' "
                       "matches no module of the policy") != std::string::npos);
    CHECK(message.find("the modules that can take adapters are self_attn, linear1 (2 modules") != std::string::npos);
    CHECK(message.find("packed in one in_proj_weight") != std::string::npos);
    CHECK(message.find("e.g. 'self_attn'") != std::string::npos);
    for (const auto& p : net->parameters()) CHECK(p.requires_grad());  // nothing changed
  }
  {
    AttnNet net(true);
    const auto message = refusal(net, lora({"out_proj"}));
    INFO(message);
    CHECK(message.find("'out_proj' names modules that cannot carry LoRA adapters") != std::string::npos);
    CHECK(message.find("packed in one in_proj_weight") != std::string::npos);
  }
  {
    // all-linear on a model whose only LoRA layer is an attention would train nothing.
    AttnNet net(false);
    const auto message = refusal(net, lora({"all-linear"}));
    INFO(message);
    CHECK(message.find("--peft.target_modules=all-linear: LoRA would train 0 parameters") != std::string::npos);
    CHECK(message.find("self_attn (1 modules") != std::string::npos);
    for (const auto& p : net->parameters()) CHECK(p.requires_grad());
  }
}

TEST_CASE("merge_lora_weights folds an attention's adapters into in_proj_weight and out_proj.weight", "[nn][lora]") {
  std::map<std::string, at::Tensor> t{{"a.in_proj_weight", torch::ones({6, 2})},
                                      {"a.in_proj_bias", torch::zeros({6})},
                                      {"a.lora_A.weight", torch::full({1, 2}, 2.0)},
                                      {"a.lora_B.weight", torch::full({6, 1}, 3.0)},
                                      {"a.out_proj.weight", torch::ones({2, 2})},
                                      {"a.base_layer.out_proj.lora_A.weight", torch::full({1, 2}, 1.0)},
                                      {"a.base_layer.out_proj.lora_B.weight", torch::full({2, 1}, 1.0)}};
  shardkit::merge_lora_weights(t, 0.5);
  CHECK(t.size() == 3);
  CHECK(torch::equal(t.at("a.in_proj_weight"), torch::full({6, 2}, 4.0)));
  CHECK(torch::equal(t.at("a.out_proj.weight"), torch::full({2, 2}, 1.5)));
  CHECK(torch::equal(t.at("a.in_proj_bias"), torch::zeros({6})));

  std::map<std::string, at::Tensor> bad{{"m.weight", torch::ones({3, 2})},
                                        {"m.lora_A.weight", torch::ones({1, 3})},
                                        {"m.lora_B.weight", torch::ones({3, 1})}};
  CHECK_THROWS_AS(shardkit::merge_lora_weights(bad, 1.0), shardkit::FormatError);
}

TEST_CASE("adapter_config.json writes task_type null for a policy that is no language model", "[nn][lora]") {
  auto o = lora({"model.encoder.layers.0.self_attn"});
  CHECK(shardkit::adapter_config_json(o, "").find(R"("task_type": "CAUSAL_LM")") != std::string::npos);
  o.task_type = "";
  CHECK(shardkit::adapter_config_json(o, "").find(R"("task_type": null)") != std::string::npos);
}
