// Packed conversations: each stays its own sequence (position_ids restart, attention kept inside it),
// so a llama's per-token losses equal those of the same conversations one per sample.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's
#undef CHECK
#include <catch2/catch.hpp>

#include "../llama/llama_support.hpp"
#include "chat_test_util.hpp"

using namespace shardkit;
using namespace shardkit::test;

namespace {

// The loss of every labelled token of `batch`, row by row, in order (position t predicts labels[t + 1]).
std::vector<double> token_losses(Policy& policy, const Batch& batch) {
  auto* lm = capability<CausalLanguageModel>(policy);
  REQUIRE(lm != nullptr);
  const auto logits = lm->logits(batch).to(torch::kDouble);
  const auto labels = batch.at("labels");
  const auto seq = labels.size(1);
  const auto all = torch::nn::functional::cross_entropy(
      logits.narrow(1, 0, seq - 1).reshape({-1, logits.size(-1)}), labels.narrow(1, 1, seq - 1).reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-100).reduction(torch::kNone));
  const auto kept = labels.narrow(1, 1, seq - 1).reshape({-1}).ne(-100);
  const auto losses = all.masked_select(kept).contiguous();
  return {losses.data_ptr<double>(), losses.data_ptr<double>() + losses.numel()};
}

}  // namespace

TEST_CASE("packed conversations give a llama the per-token losses of unpacked ones (1e-5)", "[text][chat]") {
  TempDir dir;
  std::string jsonl;
  for (int copy = 0; copy < 3; ++copy)  // enough conversations for several packed rows
    for (const auto* c : kConversations) jsonl += std::string("{\"messages\": ") + c + "}\n";
  write_file(dir / "chat.jsonl", jsonl);
  const auto tokenizer = chat_tokenizers() + "/llama3_generation";
  const auto open = [&](bool packing) {
    return open_text({{"path", dir / "chat.jsonl"}, {"tokenizer", tokenizer}, {"max_seq_len", std::int64_t{160}},
                      {"packing", packing}, {"cache_dir", dir / "cache"}});
  };
  const auto unpacked = open(false), packed = open(true);
  REQUIRE(packed->size() >= 2);
  CHECK(2 * packed->size() < unpacked->size());
  CHECK(packed->features().count("position_ids") == 1);
  CHECK(unpacked->features().count("position_ids") == 0);
  const auto a = all_samples(*unpacked), b = all_samples(*packed);
  CHECK(b.at("attention_mask").sum().item<std::int64_t>() == a.at("attention_mask").sum().item<std::int64_t>());

  torch::manual_seed(11);
  auto policy = make_llama(false, "", {{"vocab_size", std::int64_t{512}}, {"max_position_embeddings", std::int64_t{256}}});
  policy->eval();
  torch::NoGradGuard no_grad;
  const auto want = token_losses(*policy, a), got = token_losses(*policy, b);
  REQUIRE(want.size() == got.size());
  REQUIRE(want.size() > 100);
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(want[i] - got[i]));
  INFO("worst per-token loss difference " << worst);
  CHECK(worst <= 1e-5);

  // Without the positions a packed row is one sequence: the losses differ (the test can fail).
  auto flat = b;
  flat.erase("position_ids");
  const auto mixed = token_losses(*policy, flat);
  double moved = 0;
  for (std::size_t i = 0; i < want.size(); ++i) moved = std::max(moved, std::abs(want[i] - mixed[i]));
  CHECK(moved > 1e-3);
}
