// Growing a Llama's token embeddings (AITraining's resize_token_embeddings(len(tokenizer)) after
// chatml or zephyr add tokens) against transformers: the old rows stay, each new row is the mean
// of the old ones (transformers samples around that mean with covariance 1e-9 x theirs), an untied
// lm_head grows the same way, and config.json's vocab_size follows.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "llama_support.hpp"
#include "shardkit/capability.hpp"
#include "shardkit/error.hpp"
#include "shardkit/pretrained_config.hpp"
#include "shardkit/token_embeddings.hpp"

using namespace shardkit;
using namespace shardkit::test;

namespace {

torch::Tensor parameter(Policy& policy, const std::string& name) {
  for (const auto& p : policy.named_parameters())
    if (p.key() == name) return p.value();
  FAIL("no parameter " << name);
  return {};
}

}  // namespace

TEST_CASE("llama grows its token embeddings as transformers' resize_token_embeddings (mean resizing)") {
  TempDir dir("sk-llama-resize");
  peer("make " + shell_quote(dir / "tied:1:0") + " " + shell_quote(dir / "untied:0:0"));
  constexpr std::int64_t kOld = 128, kNew = 134;
  for (const bool tied : {true, false}) {
    const auto folder = dir / (tied ? "tied" : "untied");
    INFO(folder);
    peer("resize " + shell_quote(folder) + " " + std::to_string(kNew) + " " + shell_quote(folder + ".resized.safetensors"));
    const auto peer_rows = read_tensors(folder + ".resized.safetensors");
    auto policy = make_family("llama", folder);
    const auto batch = torch::randint(kOld, {2, 9}, torch::kLong);
    policy->eval();
    torch::NoGradGuard no_grad;
    auto* lm = capability<CausalLanguageModel>(*policy);
    const auto before = lm->logits({{"input_ids", batch}});
    const std::vector<std::string> grown = tied ? std::vector<std::string>{"model.embed_tokens.weight"}
                                                : std::vector<std::string>{"model.embed_tokens.weight", "lm_head.weight"};
    std::map<std::string, torch::Tensor> old;
    for (const auto& name : grown) old[name] = parameter(*policy, name).clone();

    auto* embeddings = capability<ResizableTokenEmbeddings>(*policy);
    REQUIRE(embeddings != nullptr);
    CHECK(embeddings->token_embedding_count() == kOld);
    embeddings->resize_token_embeddings(kNew);
    CHECK(embeddings->token_embedding_count() == kNew);
    for (const auto& name : grown) {
      INFO(name);
      const auto now = parameter(*policy, name);
      REQUIRE(now.sizes() == torch::IntArrayRef({kNew, 32}));
      CHECK(torch::equal(now.narrow(0, 0, kOld), old[name]));
      const auto added = now.narrow(0, kOld, kNew - kOld);
      CHECK(torch::allclose(added, old[name].mean(0, true).expand_as(added), 0, 1e-7));
      // transformers' rows: the mean plus noise of std sqrt(1e-9 var) (~1e-5 here).
      const auto& theirs = peer_rows.at(name == "lm_head.weight" ? "lm_head" : "embed_tokens");
      CHECK(torch::equal(theirs.narrow(0, 0, kOld), old[name]));
      const auto apart = (theirs.narrow(0, kOld, kNew - kOld) - added).abs().max().item<double>();
      WARN("largest difference from transformers' new rows: " << apart);
      CHECK(apart < 1e-4);
    }
    const auto after = lm->logits({{"input_ids", batch}});
    REQUIRE(after.size(2) == kNew);
    CHECK(torch::allclose(after.narrow(2, 0, kOld), before, 1e-6, 1e-6));
    const auto config = boost::json::parse(capability<PretrainedConfigWriter>(*policy)->pretrained_config_json());
    CHECK(config.at("vocab_size").to_number<std::int64_t>() == kNew);
    CHECK(peer_rows.at("vocab_size").item<std::int64_t>() == kNew);
    CHECK_THROWS_AS(embeddings->resize_token_embeddings(kNew - 1), RuntimeError);
  }
}
