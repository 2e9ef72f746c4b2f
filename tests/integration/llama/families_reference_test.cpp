// The qwen2, qwen3 and mistral policies against transformers' Qwen2ForCausalLM, Qwen3ForCausalLM
// and MistralForCausalLM: tiny random folders made by transformers load with their keys (q/k/v
// biases, q_norm/k_norm) and give the same logits, next-token logits and loss, sliding attention
// windows included (the batch is longer than each window; without it the logits differ).
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include "llama_support.hpp"
#include "shardkit/nn/block.hpp"
#include "shardkit/pretrained_config.hpp"

using namespace shardkit;
using namespace shardkit::test;

namespace {

/// The fp32 tolerance of the comparison with transformers (absolute and relative).
constexpr double kTolerance = 1e-5;

struct Family {
  std::string type, spec, layer;
  std::vector<std::string> present, absent;  // parameter names that tell the family's layout
  std::map<std::string, Value> no_window;    // options that turn its sliding window off
};

void check_family(const Family& f, const std::string& folder) {
  INFO(f.type);
  const auto reference = read_tensors(folder + ".reference.safetensors");
  auto policy = make_family(f.type, folder);

  std::set<std::string> names;
  for (const auto& p : policy->named_parameters()) names.insert(p.key());
  CHECK(names == saved_names(folder));
  for (const auto& name : f.present) CHECK(names.count(name) == 1);
  for (const auto& name : f.absent) CHECK(names.count(name) == 0);
  CHECK(policy->wrap_modules() == std::vector<std::string>{f.layer});
  CHECK(nn::find_blocks(*policy, policy->wrap_modules()).size() == 2);

  const auto logits = shardkit_logits(*policy, reference);
  const auto& expected = reference.at("logits");
  REQUIRE(logits.sizes() == expected.sizes());
  WARN(f.type << ": largest |logit difference| to transformers " << (logits - expected).abs().max().item<double>()
              << " (logits up to " << expected.abs().max().item<double>() << ")");
  CHECK(torch::allclose(logits, expected, kTolerance, kTolerance));

  const auto& mask = reference.at("attention_mask");
  const auto next = policy->select_action({{"input_ids", reference.at("input_ids")}, {"attention_mask", mask}});
  CHECK(torch::allclose(next, expected.index({torch::arange(mask.size(0)), mask.sum(1) - 1}), kTolerance, kTolerance));

  const auto out = policy->forward({{"input_ids", reference.at("input_ids")}, {"attention_mask", mask},
                                    {"labels", reference.at("labels")}});
  CHECK((out.loss / out.normalizer).item<double>() == Approx(reference.at("loss").item<double>()).epsilon(1e-5));

  // The window matters: without it the same weights give other logits.
  auto unwindowed = make_family(f.type, folder, f.no_window);
  CHECK((shardkit_logits(*unwindowed, reference) - expected).abs().max().item<double>() > 1e-2);

  // config.json as shardkit writes it names the family and its window.
  const auto config = capability<PretrainedConfigWriter>(*policy)->pretrained_config_json();
  CHECK(contains(config, "\"model_type\": \"" + f.type + "\""));
  CHECK(contains(config, "\"sliding_window\": "));
}

}  // namespace

TEST_CASE("qwen2, qwen3 and mistral compute transformers' logits (q/k/v biases, q/k norms, sliding windows)") {
  TempDir dir("sk-families-ref");
  const std::vector<Family> families = {
      {"qwen2", "qwen2:1:0:float32:qwen2", "Qwen2DecoderLayer",
       {"model.layers.0.self_attn.q_proj.bias", "model.layers.1.self_attn.v_proj.bias"},
       {"model.layers.0.self_attn.o_proj.bias", "lm_head.weight"},
       {{"use_sliding_window", false}}},
      {"qwen3", "qwen3:0:1:float32:qwen3", "Qwen3DecoderLayer",
       {"model.layers.0.self_attn.q_norm.weight", "model.layers.1.self_attn.k_norm.weight",
        "model.layers.0.self_attn.o_proj.bias", "lm_head.weight"},
       {},
       {{"layer_types", std::string(R"(["full_attention", "full_attention"])")}}},
      {"mistral", "mistral:0:0:float32:mistral", "MistralDecoderLayer",
       {"lm_head.weight"},
       {"model.layers.0.self_attn.q_proj.bias"},
       {{"sliding_window", std::int64_t{0}}}},
  };
  std::string make = "make", logits = "logits";
  for (const auto& f : families) {
    const auto folder = dir / f.type;
    make += " " + shell_quote(dir / f.spec);
    logits += " " + shell_quote(folder) + " " + shell_quote(folder + ".reference.safetensors");
  }
  peer(make);
  peer(logits);
  for (const auto& f : families) check_family(f, dir / f.type);
}

TEST_CASE("a folder of another family is refused by each policy, naming both model types") {
  TempDir dir("sk-families-wrong");
  peer("make " + shell_quote(dir / "qwen3:0:0:float32:qwen3"));
  try {
    make_family("qwen2", dir / "qwen3");
    FAIL("no error");
  } catch (const std::exception& e) {
    CHECK(contains(e.what(), "holds a 'qwen3' model (config.json's model_type); the qwen2 policy loads model_type "
                             "'qwen2' only"));
  }
}
