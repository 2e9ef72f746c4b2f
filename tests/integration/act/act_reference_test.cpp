// shardkit's act policy against LeRobot 0.6.1's ACT: LeRobot's state-dict keys and shapes, and
// the same outputs for the same weights (tests/data/act-reference, made by LeRobot itself).
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include <regex>

#include "shardkit/config.hpp"
#include "shardkit/error.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/plugin.hpp"
#include "shardkit/policy.hpp"
#include "shardkit/safetensors.hpp"
#include "shardkit/safetensors_torch.hpp"
#include "test_support.hpp"

using namespace shardkit;

namespace {

const std::string kReference = std::string(SHARDKIT_SOURCE_DIR) + "/tests/data/act-reference/act-reference.safetensors";

/// The act plugin with `options` (without "policy.") over its defaults, for `features`.
std::shared_ptr<Policy> make_act(const FeatureShapes& features, const std::map<std::string, Value>& options) {
  static Registry registry;
  if (registry.find("policy", "act") == nullptr)
    registry.load_file(std::string(SHARDKIT_PLUGIN_DIR) + "/libshardkit-policy-act.so");
  PluginContext ctx;
  const auto* d = registry.get("policy", "act").descriptor;
  for (std::uint32_t i = 0; i < d->num_options; ++i) {
    const auto& spec = d->options[i];
    const std::string v = spec.default_value;
    if (spec.type == OptionType::Int) ctx.options.set(spec.name, std::int64_t{std::stoll(v)});
    else if (spec.type == OptionType::Float) ctx.options.set(spec.name, std::stod(v));
    else if (spec.type == OptionType::Bool) ctx.options.set(spec.name, v == "true");
    else ctx.options.set(spec.name, v);
  }
  for (const auto& [key, value] : options) ctx.options.set(key, value);
  ctx.features = features;
  return registry.create_as<Policy>("policy", "act", ctx);
}

/// Every parameter and buffer by name.
std::map<std::string, torch::Tensor> state_of(Policy& policy) {
  std::map<std::string, torch::Tensor> state;
  for (const auto& p : policy.named_parameters()) state[p.key()] = p.value();
  for (const auto& b : policy.named_buffers()) state[b.key()] = b.value();
  return state;
}

/// The weights make_reference.py gives the k-th key (sorted) of LeRobot's state dict.
void formula_fill(std::map<std::string, torch::Tensor>& state) {
  torch::NoGradGuard no_grad;
  std::int64_t k = 0;
  for (auto& [name, t] : state) {
    const auto index = k++;
    if (name == "model.vae_encoder_pos_enc") continue;
    auto v = torch::sin(torch::arange(t.numel(), torch::kFloat32) * 0.37 + static_cast<double>(index)) * 0.05;
    const auto ends = [&](const std::string& s) {
      return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    if (ends("running_var") || ((name.find(".bn") != std::string::npos || name.find("downsample.1") != std::string::npos) &&
                                ends("weight")))
      v = v + 1.0;
    t.copy_(v.reshape(t.sizes()));
  }
}

}  // namespace

TEST_CASE("act has LeRobot's 234 state-dict entries and 51,597,190 parameters for one camera, state 6, action 6") {
  const auto policy = make_act({{"observation.state", {6}}, {"observation.images.top", {3, 96, 128}}, {"action", {6}}},
                               {{"pretrained_backbone_weights", std::string("null")}});
  const auto state = state_of(*policy);
  CHECK(state.size() == 234);
  std::int64_t parameters = 0;
  for (const auto& p : policy->parameters()) parameters += p.numel();
  CHECK(parameters == 51'597'190);
  for (const auto* key : {"model.backbone.layer2.0.downsample.1.running_var", "model.encoder.layers.3.self_attn.in_proj_weight",
                          "model.decoder.layers.0.multihead_attn.out_proj.bias", "model.decoder.norm.weight",
                          "model.vae_encoder_pos_enc", "model.encoder_img_feat_input_proj.weight"})
    CHECK(state.count(key) == 1);
  CHECK(policy->wrap_modules() == std::vector<std::string>{"ACTEncoderLayer", "ACTDecoderLayer"});
  const auto deltas = policy->delta_indices();
  REQUIRE(deltas.count("action") == 1);
  CHECK(deltas.at("action").size() == 100);
  CHECK(deltas.at("action").back() == 99);
}

TEST_CASE("act computes what LeRobot's ACT computes for the same weights and inputs") {
  const auto file = safetensors::File::open(kReference);
  const auto meta = file.metadata().at("keys");
  for (const std::string model : {"camera", "env", "camera_novae"}) {
    const bool vae = model != "camera_novae";
    INFO("model " << model);
    Batch batch;
    FeatureShapes features{{"action", {6}}};
    for (const auto& name : file.names()) {
      const auto prefix = model + "/input/";
      if (name.rfind(prefix, 0) != 0) continue;
      const auto key = name.substr(prefix.size());
      batch[key] = safetensors::to_tensor(file.get(name)).clone();
      if (key != "action" && key != "action_is_pad") features[key] = batch[key].sizes().slice(1).vec();
    }
    auto policy = make_act(features, {{"dim_model", std::int64_t{32}}, {"n_heads", std::int64_t{4}},
                                      {"dim_feedforward", std::int64_t{64}}, {"n_encoder_layers", std::int64_t{2}},
                                      {"n_decoder_layers", std::int64_t{1}}, {"n_vae_encoder_layers", std::int64_t{2}},
                                      {"latent_dim", std::int64_t{8}}, {"chunk_size", std::int64_t{5}},
                                      {"n_action_steps", std::int64_t{5}}, {"dropout", 0.0}, {"use_vae", vae},
                                      {"pretrained_backbone_weights", std::string("null")}});
    auto state = state_of(*policy);
    // Keys and shapes: exactly LeRobot's.
    const auto section = meta.substr(meta.find("\"" + model + "\""));
    const std::regex entry("\"(model\\.[^\"]+)\": \\[([0-9, ]*)\\]");
    std::map<std::string, std::string> want;
    for (std::sregex_iterator it(section.begin(), section.end(), entry), end; it != end; ++it) {
      if (want.count((*it)[1].str())) break;  // the next model's section
      want[(*it)[1].str()] = (*it)[2].str();
    }
    std::map<std::string, std::string> got;
    for (const auto& [name, t] : state) {
      std::string dims;
      for (const auto d : t.sizes()) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      got[name] = dims;
    }
    CHECK(got == want);

    if (vae)
      CHECK(torch::allclose(state.at("model.vae_encoder_pos_enc"),
                            safetensors::to_tensor(file.get(model + "/vae_encoder_pos_enc")), 0, 1e-6));
    formula_fill(state);

    // Inference: the queue hands out the chunk LeRobot predicts, one step per call.
    std::vector<torch::Tensor> steps;
    for (int i = 0; i < 5; ++i) steps.push_back(policy->select_action(batch));
    const auto actions = torch::stack(steps, 1);
    const auto expected = safetensors::to_tensor(file.get(model + "/actions"));
    INFO("largest difference " << (actions - expected).abs().max().item<double>());
    CHECK(torch::allclose(actions, expected, 1e-4, 1e-5));

    // Training: without the VAE (dropout 0) the loss itself; with it, the VAE encoder's latent
    // distribution, seen through the KL term (the latent sample is random).
    policy->train();
    const auto out = policy->forward(batch);
    if (!vae) {
      // Returned as the sum over non-padded action elements with their count: LeRobot's mean.
      const double want_loss = safetensors::to_tensor(file.get(model + "/loss")).item<double>();
      REQUIRE(out.normalizer.defined());
      CHECK((out.loss / out.normalizer).item<double>() == Approx(want_loss).epsilon(1e-5));
      CHECK(out.metrics.at("l1_loss") == Approx(want_loss).epsilon(1e-5));
    } else {
      const auto mu = safetensors::to_tensor(file.get(model + "/mu"));
      const auto ls = safetensors::to_tensor(file.get(model + "/log_sigma_x2"));
      const double kld = (-0.5 * (1 + ls - mu.pow(2) - ls.exp())).sum(-1).mean().item<double>();
      REQUIRE(out.metrics.count("kld_loss") == 1);
      CHECK(out.metrics.at("kld_loss") == Approx(kld).epsilon(1e-4));
    }
    CHECK(out.loss.requires_grad());
  }
}

TEST_CASE("act refuses configurations LeRobot refuses, naming the option") {
  const FeatureShapes features{{"observation.state", {6}}, {"observation.images.top", {3, 96, 128}}, {"action", {6}}};
  const std::map<std::string, Value> null_weights{{"pretrained_backbone_weights", std::string("null")}};
  const auto error = [&](std::map<std::string, Value> options, const FeatureShapes& f) {
    options.insert(null_weights.begin(), null_weights.end());
    try {
      make_act(f, options);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(error({{"n_action_steps", std::int64_t{120}}}, features), Catch::Contains("--policy.n_action_steps=120 exceeds --policy.chunk_size=100"));
  CHECK_THAT(error({{"temporal_ensemble_coeff", std::string("0.01")}}, features),
             Catch::Contains("--policy.temporal_ensemble_coeff needs --policy.n_action_steps=1"));
  CHECK_THAT(error({}, {{"observation.state", {6}}, {"action", {6}}}),
             Catch::Contains("act needs at least one camera (observation.images.*) or observation.environment_state"));
  CHECK_THAT(error({{"vision_backbone", std::string("resnet50")}}, features),
             Catch::Contains("--policy.vision_backbone=resnet50 is not available"));
  // ImageNet weights come only from the local torch hub cache, never from the network.
  test::TempDir hub("sk-act-hub");
  ::setenv("TORCH_HOME", hub.path().c_str(), 1);
  const auto missing = error({{"pretrained_backbone_weights", std::string("ResNet18_Weights.IMAGENET1K_V1")}}, features);
  ::unsetenv("TORCH_HOME");
  CHECK_THAT(missing, Catch::Contains("hub/checkpoints/resnet18-f37072fd.pth, which is not there (shardkit never downloads)"));
  CHECK_THAT(missing, Catch::Contains("--policy.pretrained_backbone_weights=null"));
}
