// Issue 15's loss contract with the tiny Llama on variable-length token data: the same weights
// whatever the split of 16 sequences per optimizer step into micro-batches and ranks.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include <algorithm>

#include "../distributed/launch.hpp"
#include "llama_support.hpp"

using namespace shardkit;
using namespace shardkit::test;

namespace {

struct Split {
  const char* name;
  int batch, accum, nproc;
  const char* backend;
};

// AdamW's first updates are lr * g / (|g| + eps): with the default eps (1e-8) an element whose
// gradient is nearly zero (a gate that is almost off) turns fp32 rounding of g (the order of
// summation differs with the split) into a visible weight difference (7e-6 relative measured on
// one gate_proj element). A larger eps keeps the update linear in such tiny gradients, so the
// test sees the normalization, not AdamW's amplification of rounding (3e-7 measured).
const char* const kAdamEps = "--optimizer.eps=1e-5";

void train(const std::string& out, const std::string& folder, const Split& s) {
  const int steps = 6 * s.accum;  // 6 optimizer updates of 16 sequences
  const std::vector<std::string> args = {
      "--output_dir=" + out, "--policy.path=" + folder,
      "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/datasets", "--dataset.type=tokens_fixture",
      "--dataset.vocab_size=128", "--dataset.min_len=2", "--dataset.max_len=12", "--dataset.num_samples=192",
      "--batch_size=" + std::to_string(s.batch),
      "--accelerator.gradient_accumulation.steps=" + std::to_string(s.accum), "--steps=" + std::to_string(steps),
      "--save_freq=" + std::to_string(steps), "--optimizer.lr=1e-3", kAdamEps, "--log_freq=1", "--seed=7", "--num_threads=1",
      "--distributed.timeout_s=120", "--distributed_backend=" + std::string(s.backend)};
  const auto r = s.nproc == 1 ? run_program("shardkit-train", args) : launch(s.nproc, args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
}

/// Largest difference between the weights of two runs, relative to each tensor's largest value.
double weight_difference(const std::string& a, const std::string& b) {
  const auto x = read_tensors(a + "/checkpoints/last/pretrained_model/model.safetensors");
  const auto y = read_tensors(b + "/checkpoints/last/pretrained_model/model.safetensors");
  REQUIRE(x.size() == y.size());
  double worst = 0;
  for (const auto& [name, t] : x) {
    const auto u = t.to(torch::kDouble), v = y.at(name).to(torch::kDouble);
    worst = std::max(worst, (u - v).abs().max().item<double>() / std::max(1e-12, v.abs().max().item<double>()));
  }
  return worst;
}

}  // namespace

TEST_CASE("llama on variable-length data: (16,1,1 rank), (1,16,1 rank) and (2,2,4 ranks) give the same weights") {
  TempDir dir("sk-llama-loss");
  peer("make " + shell_quote(dir / "start:0:0"));
  const Split splits[] = {{"b16_a1_r1", 16, 1, 1, "single"},
                          {"b1_a16_r1", 1, 16, 1, "single"},
                          {"b2_a2_r4_ddp", 2, 2, 4, "ddp"},
                          {"b2_a2_r4_fsdp", 2, 2, 4, "fsdp"}};
  for (const auto& s : splits) train(dir / s.name, dir / "start", s);
  // Training moved the weights (so equal weights are not just the starting ones).
  const auto start = read_tensors(dir / "start/model.safetensors");
  const auto trained = read_tensors(dir / "b16_a1_r1/checkpoints/last/pretrained_model/model.safetensors");
  CHECK((trained.at("model.layers.0.self_attn.q_proj.weight") - start.at("model.layers.0.self_attn.q_proj.weight"))
            .abs().max().item<double>() > 1e-4);
  for (const auto* other : {"b1_a16_r1", "b2_a2_r4_ddp", "b2_a2_r4_fsdp"}) {
    const auto d = weight_difference(dir / other, dir / "b16_a1_r1");
    WARN(other << ": worst relative weight difference to b16_a1_r1 " << d);
    CHECK(d <= 1e-6);
  }
}
