// Plain LibTorch training loop with the mlp policy's architecture: the peer shardkit-train is timed against.
//
// Same model (input Linear, N pre-norm residual blocks x + fc2(gelu(fc1(layernorm(x)))),
// head Linear), same batch shapes, data drawn from an in-memory table with index_select as
// the synthetic dataset does, forward + MSE + backward + clip_grad_norm_ + torch::optim::AdamW.
// Gradients are reset to undefined after each step, as shardkit's AdamW::zero_grad does
// (LibTorch 1.13's Optimizer::zero_grad zeroes them in place instead).
//
// Prints one JSON line: {"program":"libtorch","steps":..,"measured_steps":..,"steps_per_s":..}
// where steps/s counts the steps after --warmup_steps only (start-up and warm-up excluded).
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

/// Pre-norm residual block, the same layers and names as the mlp policy's MlpBlock.
struct BlockImpl : torch::nn::Module {
  BlockImpl(std::int64_t dim, std::int64_t expansion) {
    norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
    fc1 = register_module("fc1", torch::nn::Linear(dim, dim * expansion));
    fc2 = register_module("fc2", torch::nn::Linear(dim * expansion, dim));
  }
  torch::Tensor forward(const torch::Tensor& x) { return x + fc2(torch::gelu(fc1(norm(x)))); }

  torch::nn::LayerNorm norm{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(Block);

/// input_proj -> blocks -> head, as the mlp policy.
struct MlpImpl : torch::nn::Module {
  MlpImpl(std::int64_t in, std::int64_t dim, std::int64_t blocks_n, std::int64_t expansion,
          std::int64_t out) {
    input_proj = register_module("input_proj", torch::nn::Linear(in, dim));
    blocks = register_module("blocks", torch::nn::Sequential());
    for (std::int64_t i = 0; i < blocks_n; ++i) blocks->push_back(Block(dim, expansion));
    head = register_module("head", torch::nn::Linear(dim, out));
  }
  torch::Tensor forward(const torch::Tensor& x) { return head(blocks->forward(input_proj(x))); }

  torch::nn::Linear input_proj{nullptr}, head{nullptr};
  torch::nn::Sequential blocks{nullptr};
};
TORCH_MODULE(Mlp);

/// `--key=value` flags with defaults; an unknown key is an error naming it.
class Flags {
 public:
  Flags(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const auto eq = arg.find('=');
      if (arg.rfind("--", 0) != 0 || eq == std::string::npos)
        throw std::invalid_argument("expected --key=value, got '" + arg + "'");
      const auto key = arg.substr(2, eq - 2);
      if (!values_.count(key)) throw std::invalid_argument("unknown flag --" + key);
      values_[key] = arg.substr(eq + 1);
    }
  }
  std::int64_t integer(const std::string& key) const { return std::stoll(values_.at(key)); }
  double real(const std::string& key) const { return std::stod(values_.at(key)); }
  const std::string& text(const std::string& key) const { return values_.at(key); }

 private:
  std::map<std::string, std::string> values_{
      {"hidden_dim", "128"}, {"num_blocks", "4"},      {"expansion", "2"},
      {"batch_size", "8"},   {"state_dim", "16"},      {"action_dim", "4"},
      {"num_samples", "4096"}, {"steps", "100"},       {"warmup_steps", "10"},
      {"seed", "1000"},      {"num_threads", "1"},     {"lr", "1e-3"},
      {"weight_decay", "0.01"}, {"grad_clip_norm", "10"}, {"out", ""}};
};

int run(const Flags& flags) {
  torch::set_num_threads(static_cast<int>(flags.integer("num_threads")));
  torch::manual_seed(static_cast<std::uint64_t>(flags.integer("seed")));
  const auto batch = flags.integer("batch_size");
  const auto steps = flags.integer("steps");
  const auto warmup = flags.integer("warmup_steps");
  const auto n = flags.integer("num_samples");
  if (warmup >= steps) throw std::invalid_argument("--warmup_steps must be below --steps");

  const auto states = torch::randn({n, flags.integer("state_dim")});
  const auto actions = torch::randn({n, flags.integer("action_dim")});
  Mlp model(flags.integer("state_dim"), flags.integer("hidden_dim"), flags.integer("num_blocks"),
            flags.integer("expansion"), flags.integer("action_dim"));
  model->train();
  auto params = model->parameters();
  torch::optim::AdamW optimizer(
      params, torch::optim::AdamWOptions(flags.real("lr")).weight_decay(flags.real("weight_decay")));
  const double clip = flags.real("grad_clip_norm");

  auto perm = torch::randperm(n, torch::kLong);
  std::int64_t cursor = 0;
  double loss_value = 0;
  auto measure_start = Clock::now();
  for (std::int64_t step = 0; step < steps; ++step) {
    if (step == warmup) measure_start = Clock::now();
    if (cursor + batch > n) {
      perm = torch::randperm(n, torch::kLong);
      cursor = 0;
    }
    const auto index = perm.slice(0, cursor, cursor + batch);
    cursor += batch;
    const auto x = states.index_select(0, index);
    const auto y = actions.index_select(0, index);

    const auto loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    loss_value = loss.item<double>();
    torch::nn::utils::clip_grad_norm_(params, clip);
    optimizer.step();
    for (auto& p : params) p.mutable_grad() = torch::Tensor();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - measure_start).count();
  const auto measured = steps - warmup;
  const std::string line = "{\"program\":\"libtorch\",\"steps\":" + std::to_string(steps) +
                           ",\"measured_steps\":" + std::to_string(measured) +
                           ",\"steps_per_s\":" + std::to_string(measured / seconds) +
                           ",\"final_loss\":" + std::to_string(loss_value) + "}";
  std::cout << line << std::endl;
  if (!flags.text("out").empty()) {
    std::ofstream out(flags.text("out"), std::ios::app);
    if (!out) throw std::runtime_error("cannot append to --out=" + flags.text("out"));
    out << line << '\n';
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(Flags(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "bench_libtorch_mlp: " << e.what() << std::endl;
    return 2;
  }
}
