// LoraLinear and apply_lora: a fresh adapter changes nothing, gradients reach only the adapter,
// targets match by name suffix and an unmatched target is refused naming the modules.
#include <torch/torch.h>
#undef CHECK  // glog's CHECK (pulled in by LibTorch) would shadow Catch2's
#include <catch2/catch.hpp>

#include <shardkit/error.hpp>
#include <shardkit/nn/lora_linear.hpp>
#include "../../../apps/shardkit-train/src/peft.hpp"

namespace {

using shardkit::nn::LoraLinear;

// Two "layers" with attention-like and MLP-like projections, plus an output layer.
struct TinyImpl : torch::nn::Module {
  TinyImpl() {
    for (int i = 0; i < 2; ++i) {
      auto layer = std::make_shared<torch::nn::Module>();
      layer->register_module("q_proj", LoraLinear(8, 8, false));
      layer->register_module("v_proj", LoraLinear(8, 4, true));
      layer->register_module("up_proj", LoraLinear(8, 16, false));
      layer->register_parameter("norm_weight", torch::ones({8}));
      layers->push_back(layer);
    }
    register_module("layers", layers);
    lm_head = register_module("lm_head", LoraLinear(8, 10, false));
    embed = register_module("embed", torch::nn::Embedding(10, 8));
  }
  torch::nn::ModuleList layers;
  LoraLinear lm_head{nullptr};
  torch::nn::Embedding embed{nullptr};
};
TORCH_MODULE(Tiny);

shardkit::LoraOptions lora(std::vector<std::string> targets, std::int64_t r = 4, double alpha = 8) {
  shardkit::LoraOptions o;
  o.r = r;
  o.lora_alpha = alpha;
  o.target_modules = std::move(targets);
  return o;
}

}  // namespace

TEST_CASE("LoraLinear has Linear's parameter names and Linear's output") {
  torch::manual_seed(0);
  LoraLinear layer(6, 5, true);
  std::vector<std::string> names;
  for (const auto& p : layer->named_parameters()) names.push_back(p.key());
  CHECK(names == std::vector<std::string>{"weight", "bias"});
  const auto x = torch::randn({3, 6});
  CHECK(torch::equal(layer(x), torch::addmm(layer->bias, x, layer->weight.t())));
}

TEST_CASE("a fresh LoRA adapter (B = 0) gives exactly the base output; gradients reach only lora_A and lora_B") {
  torch::manual_seed(1);
  LoraLinear layer(6, 5, true);
  const auto x = torch::randn({4, 6});
  const auto before = layer(x).detach().clone();
  layer->enable_lora(3, 6.0, 0.0);
  std::vector<std::string> names;
  for (const auto& p : layer->named_parameters()) names.push_back(p.key());
  CHECK(names == std::vector<std::string>{"weight", "bias", "lora_A.weight", "lora_B.weight"});
  CHECK(layer->lora_A->weight.sizes() == torch::IntArrayRef({3, 6}));
  CHECK(layer->lora_B->weight.sizes() == torch::IntArrayRef({5, 3}));
  CHECK(torch::all(layer->lora_B->weight == 0).item<bool>());
  CHECK(torch::equal(layer(x), before));
  CHECK(layer->scaling() == 2.0);

  // One step on B makes the adapter non-zero; then the output is base + B A x * alpha / r.
  layer(x).pow(2).sum().backward();
  CHECK_FALSE(layer->weight.grad().defined());
  CHECK_FALSE(layer->bias.grad().defined());
  CHECK_FALSE(layer->weight.requires_grad());
  REQUIRE(layer->lora_B->weight.grad().defined());
  CHECK(layer->lora_B->weight.grad().abs().sum().item<double>() > 0);
  REQUIRE(layer->lora_A->weight.grad().defined());  // zero while B is zero, but it flows
  {
    torch::NoGradGuard no_grad;
    layer->lora_B->weight.normal_();
  }
  const auto expected = before + torch::matmul(x, torch::matmul(layer->lora_B->weight, layer->lora_A->weight).t()) * 2.0;
  CHECK(torch::allclose(layer(x), expected, 1e-5, 1e-6));

  // A (batch, time, features) input: PEFT's formula's output and gradients.
  const auto x3 = torch::randn({2, 3, 6}).requires_grad_(true);
  layer->zero_grad();
  const auto out = layer(x3);
  CHECK(out.sizes() == torch::IntArrayRef({2, 3, 5}));
  out.pow(2).sum().backward();
  const auto xr = x3.detach().clone().requires_grad_(true);
  const auto a = layer->lora_A->weight.detach().clone().requires_grad_(true);
  const auto b = layer->lora_B->weight.detach().clone().requires_grad_(true);
  namespace F = torch::nn::functional;
  const auto peft = F::linear(xr, layer->weight, layer->bias) + F::linear(F::linear(xr, a), b) * 2.0;
  CHECK(torch::allclose(out, peft, 1e-5, 1e-6));
  peft.pow(2).sum().backward();
  CHECK(torch::allclose(x3.grad(), xr.grad(), 1e-5, 1e-6));
  CHECK(torch::allclose(layer->lora_A->weight.grad(), a.grad(), 1e-5, 1e-6));
  CHECK(torch::allclose(layer->lora_B->weight.grad(), b.grad(), 1e-5, 1e-6));

  // A base unfrozen again gets its gradients too; without grad mode, only the output.
  layer->weight.set_requires_grad(true);
  layer->bias.set_requires_grad(true);
  layer(x3).pow(2).sum().backward();
  const auto w = layer->weight.detach().clone().requires_grad_(true);
  const auto bias = layer->bias.detach().clone().requires_grad_(true);
  (F::linear(x3.detach(), w, bias) + F::linear(F::linear(x3.detach(), a.detach()), b.detach()) * 2.0)
      .pow(2)
      .sum()
      .backward();
  CHECK(torch::allclose(layer->weight.grad(), w.grad(), 1e-5, 1e-6));
  CHECK(torch::allclose(layer->bias.grad(), bias.grad(), 1e-5, 1e-6));
  {
    torch::NoGradGuard no_grad;
    CHECK(torch::allclose(layer(x3), out, 1e-5, 1e-6));
  }
  CHECK_THROWS_AS(layer->enable_lora(3, 6.0, 0.0), shardkit::RuntimeError);
}

TEST_CASE("a LoRA layer without a bias gives PEFT's output and gradients") {
  torch::manual_seed(2);
  LoraLinear layer(6, 5, false);
  layer->enable_lora(2, 4.0, 0.0);
  {
    torch::NoGradGuard no_grad;
    layer->lora_B->weight.normal_();
  }
  const auto x = torch::randn({3, 6}).requires_grad_(true);
  layer(x).pow(2).sum().backward();
  const auto xr = x.detach().clone().requires_grad_(true);
  const auto a = layer->lora_A->weight.detach().clone().requires_grad_(true);
  const auto b = layer->lora_B->weight.detach().clone().requires_grad_(true);
  namespace F = torch::nn::functional;
  (F::linear(xr, layer->weight) + F::linear(F::linear(xr, a), b) * 2.0).pow(2).sum().backward();
  CHECK(torch::allclose(x.grad(), xr.grad(), 1e-5, 1e-6));
  CHECK(torch::allclose(layer->lora_A->weight.grad(), a.grad(), 1e-5, 1e-6));
  CHECK(torch::allclose(layer->lora_B->weight.grad(), b.grad(), 1e-5, 1e-6));
}

TEST_CASE("apply_lora adapts the modules whose names end with a target and freezes the rest") {
  torch::manual_seed(2);
  Tiny model;
  std::int64_t total = 0;
  for (const auto& p : model->parameters()) total += p.numel();
  const auto summary = shardkit::apply_lora(*model, lora({"q_proj", "layers.1.v_proj"}));
  CHECK(summary.adapted == std::vector<std::string>{"layers.0.q_proj", "layers.1.q_proj", "layers.1.v_proj"});
  CHECK(summary.trainable == std::set<std::string>{"layers.0.q_proj.lora_A.weight", "layers.0.q_proj.lora_B.weight",
                                                   "layers.1.q_proj.lora_A.weight", "layers.1.q_proj.lora_B.weight",
                                                   "layers.1.v_proj.lora_A.weight", "layers.1.v_proj.lora_B.weight"});
  CHECK(summary.adapter_parameters == summary.trainable);
  CHECK(summary.trainable_numel == 2 * (4 * 8 + 8 * 4) + (4 * 8 + 4 * 4));
  CHECK(summary.total_numel == total + summary.trainable_numel);
  for (const auto& p : model->named_parameters())
    CHECK(p.value().requires_grad() == (summary.trainable.count(p.key()) == 1));
}

TEST_CASE("apply_lora all-linear leaves out lm_head; full-training modules stay trainable") {
  Tiny model;
  auto options = lora({"all-linear"});
  options.full_training_modules = {"lm_head", "embed"};
  const auto summary = shardkit::apply_lora(*model, options);
  CHECK(summary.adapted.size() == 6);
  for (const auto& name : summary.adapted) CHECK(name.find("lm_head") == std::string::npos);
  CHECK(summary.trainable.count("lm_head.weight") == 1);
  CHECK(summary.trainable.count("embed.weight") == 1);
  CHECK(summary.trainable.count("layers.0.up_proj.lora_A.weight") == 1);
  CHECK(summary.trainable.count("layers.0.up_proj.weight") == 0);
  CHECK(summary.trainable.count("layers.0.norm_weight") == 0);
}

TEST_CASE("apply_lora refuses a target that matches nothing, naming the modules that can take adapters") {
  Tiny model;
  try {
    shardkit::apply_lora(*model, lora({"q_proj", "k_proj"}));
    FAIL("no error");
  } catch (const shardkit::ConfigError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.find("'k_proj' matches no module") != std::string::npos);
    CHECK(message.find("q_proj, v_proj, up_proj, lm_head") != std::string::npos);
  }
  // A suffix must be whole name components: "proj" is not "q_proj".
  CHECK_THROWS_AS(shardkit::apply_lora(*Tiny(), lora({"proj"})), shardkit::ConfigError);
  // A module that exists but cannot carry adapters.
  try {
    shardkit::apply_lora(*Tiny(), lora({"embed"}));
    FAIL("no error");
  } catch (const shardkit::ConfigError& e) {
    CHECK(std::string(e.what()).find("cannot carry LoRA adapters") != std::string::npos);
  }
  auto options = lora({"q_proj"});
  options.full_training_modules = {"classifier"};
  CHECK_THROWS_AS(shardkit::apply_lora(*Tiny(), options), shardkit::ConfigError);
  // Nothing was changed by a refused call.
  Tiny untouched;
  CHECK_THROWS(shardkit::apply_lora(*untouched, lora({"nothing"})));
  for (const auto& p : untouched->parameters()) CHECK(p.requires_grad());
}

TEST_CASE("merge_lora_weights folds B A * scaling into the base weight and drops the adapter") {
  std::map<std::string, at::Tensor> t{{"m.weight", torch::ones({3, 2})},
                                      {"m.lora_A.weight", torch::full({1, 2}, 2.0)},
                                      {"m.lora_B.weight", torch::full({3, 1}, 3.0)},
                                      {"n.weight", torch::zeros({2})}};
  shardkit::merge_lora_weights(t, 0.5);
  CHECK(t.size() == 2);
  CHECK(torch::equal(t.at("m.weight"), torch::full({3, 2}, 4.0)));
  CHECK(torch::equal(t.at("n.weight"), torch::zeros({2})));
}

TEST_CASE("adapter_config.json carries PEFT's fields") {
  auto o = lora({"q_proj", "v_proj"}, 16, 32);
  o.full_training_modules = {"lm_head"};
  const auto text = shardkit::adapter_config_json(o, "base/folder");
  for (const char* field : {R"("peft_type": "LORA")", R"("task_type": "CAUSAL_LM")", R"("r": 16)",
                            R"("lora_alpha": 32)", R"("target_modules": ["q_proj", "v_proj"])",
                            R"("modules_to_save": ["lm_head"])", R"("base_model_name_or_path": "base/folder")",
                            R"("bias": "none")", R"("fan_in_fan_out": false)", R"("inference_mode": true)"})
    CHECK(text.find(field) != std::string::npos);
}
