// shardkit's llama policy against transformers' LlamaForCausalLM: tiny random folders made by
// transformers (tied and sharded, untied in one file, bf16) load with their keys, and give the
// same logits (every position of a right-padded batch, and its unpadded row alone), next-token
// logits and loss.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "llama_support.hpp"
#include "shardkit/error.hpp"
#include "shardkit/nn/block.hpp"

using namespace shardkit;
using namespace shardkit::test;

namespace {

/// The fp32 tolerance of the comparison with transformers (absolute and relative).
constexpr double kTolerance = 1e-5;

void check_against_transformers(const std::string& folder, bool tied, const std::string& what) {
  INFO(what);
  const auto reference = read_tensors(folder + ".reference.safetensors");
  auto policy = make_llama(tied, folder);

  // transformers' keys, lm_head.weight only when untied.
  std::set<std::string> names;
  for (const auto& p : policy->named_parameters()) names.insert(p.key());
  CHECK(names == saved_names(folder));
  CHECK(names.count("lm_head.weight") == (tied ? 0u : 1u));
  CHECK(names.count("model.layers.1.self_attn.k_proj.weight") == 1);
  CHECK(policy->wrap_modules() == std::vector<std::string>{"LlamaDecoderLayer"});
  CHECK(nn::find_blocks(*policy, policy->wrap_modules()).size() == 2);

  // Every position's logits, padded ones included.
  const auto logits = shardkit_logits(*policy, reference);
  const auto& expected = reference.at("logits");
  REQUIRE(logits.sizes() == expected.sizes());
  const double worst = (logits - expected).abs().max().item<double>();
  WARN(what << ": largest |logit difference| to transformers " << worst << " (logits up to "
            << expected.abs().max().item<double>() << ")");
  CHECK(torch::allclose(logits, expected, kTolerance, kTolerance));

  // The unpadded first row alone, with no mask and with an all-ones mask: the causal path
  // (sdpa's own causal mask, grouped key/value heads read in place) gives the same logits.
  REQUIRE(reference.at("attention_mask")[0].all().item<bool>());
  const auto row = reference.at("input_ids").narrow(0, 0, 1);
  auto* lm = capability<CausalLanguageModel>(*policy);
  torch::NoGradGuard no_grad;
  for (const auto& batch : {Batch{{"input_ids", row}}, Batch{{"input_ids", row}, {"attention_mask", torch::ones_like(row)}}})
    CHECK(torch::allclose(lm->logits(batch), expected.narrow(0, 0, 1), kTolerance, kTolerance));

  // Next-token logits at each row's last real position.
  const auto& mask = reference.at("attention_mask");
  const auto next = policy->select_action({{"input_ids", reference.at("input_ids")}, {"attention_mask", mask}});
  const auto last = mask.sum(1) - 1;
  CHECK(torch::allclose(next, expected.index({torch::arange(mask.size(0)), last}), kTolerance, kTolerance));

  // The loss: summed over labelled predicted positions, their count as normalizer; its mean is transformers'.
  const auto out = policy->forward({{"input_ids", reference.at("input_ids")}, {"attention_mask", mask},
                                    {"labels", reference.at("labels")}});
  REQUIRE(out.normalizer.defined());
  const auto labels = reference.at("labels");
  CHECK(out.normalizer.item<double>() == labels.narrow(1, 1, labels.size(1) - 1).ne(-100).sum().item<double>());
  CHECK((out.loss / out.normalizer).item<double>() == Approx(reference.at("loss").item<double>()).epsilon(1e-5));
}

std::string construction_error(bool tied, const std::string& path, const std::map<std::string, Value>& options = {}) {
  try {
    make_llama(tied, path, options);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("llama computes transformers' logits for tiny random Llama folders (GQA, llama3 rope)") {
  TempDir dir("sk-llama-ref");
  // Tied and sharded with max_shard_size; untied in one model.safetensors; a bf16 file.
  peer("make " + shell_quote(dir / "tied:1:1") + " " + shell_quote(dir / "untied:0:0") + " " +
       shell_quote(dir / "bf16:0:0:bfloat16"));
  std::string logits = "logits";
  for (const auto* name : {"tied", "untied", "bf16"})
    logits += " " + shell_quote(dir / name) + " " + shell_quote(dir / name + ".reference.safetensors");
  peer(logits);
  REQUIRE(std::filesystem::exists(dir / "tied/model.safetensors.index.json"));
  REQUIRE(std::filesystem::exists(dir / "untied/model.safetensors"));
  check_against_transformers(dir / "tied", true, "tied, sharded");
  check_against_transformers(dir / "untied", false, "untied, one file");
  check_against_transformers(dir / "bf16", false, "bf16 file loaded into fp32");
}

TEST_CASE("llama refuses bad folders and options with errors naming the key or option") {
  TempDir dir("sk-llama-bad");
  peer("make " + shell_quote(dir / "m:0:0") + " " + shell_quote(dir / "tied:1:0"));
  namespace fs = std::filesystem;
  // Another model type.
  fs::copy(dir / "m", dir / "gpt2");
  {
    auto text = slurp(dir / "gpt2/config.json");
    text.replace(text.find("\"llama\""), 7, "\"gpt2\"");
    std::ofstream(dir / "gpt2/config.json") << text;
  }
  CHECK_THAT(construction_error(false, dir / "gpt2"), Catch::Contains("holds a 'gpt2' model"));
  {
    const auto r = run_program("shardkit-train", {"--policy.path=" + dir / "gpt2", "--output_dir=" + dir / "run"});
    INFO(r.output);
    CHECK(r.exit_code != 0);
    CHECK(contains(r.output, "holds a 'gpt2' model (config.json's model_type)"));
    CHECK(contains(r.output, "the Hugging Face model types it supports are 'llama'"));
  }
  // No weights.
  fs::create_directory(dir / "empty");
  fs::copy_file(dir / "m/config.json", dir / "empty/config.json");
  CHECK_THAT(construction_error(false, dir / "empty"),
             Catch::Contains("neither model.safetensors nor model.safetensors.index.json"));
  // Sizes that do not match the weights.
  CHECK_THAT(construction_error(false, dir / "m", {{"intermediate_size", std::int64_t{48}}}),
             Catch::Contains("tensor 'model.layers.0.mlp.gate_proj.weight' has shape [64, 32]") &&
                 Catch::Contains("shape mismatch"));
  // An untied model from a tied folder: lm_head.weight is missing.
  CHECK_THAT(construction_error(false, dir / "tied"), Catch::Contains("no tensor 'lm_head.weight'") &&
                                                          Catch::Contains("missing key"));
  // Weights of a layer the model does not have.
  CHECK_THAT(construction_error(false, dir / "m", {{"num_hidden_layers", std::int64_t{1}}}),
             Catch::Contains("'model.layers.1.") && Catch::Contains("unexpected key"));
  // Rope types other than default and llama3.
  CHECK_THAT(construction_error(false, "", {{"rope_scaling", std::string(R"({"rope_type": "yarn", "factor": 4.0})")}}),
             Catch::Contains("--policy.rope_scaling: rope_type 'yarn' is not implemented"));
  CHECK_THAT(construction_error(false, "", {{"rope_scaling", std::string(R"({"rope_type": "llama3", "factor": 8.0})")}}),
             Catch::Contains("needs \"low_freq_factor\""));
  CHECK_THAT(construction_error(false, "", {{"num_key_value_heads", std::int64_t{3}}}),
             Catch::Contains("--policy.num_key_value_heads=3 does not divide --policy.num_attention_heads=4"));
}
