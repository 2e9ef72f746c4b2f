// Evaluation on a validation dataset: the mean loss over every full batch of it, across ranks.
#include "evaluation.hpp"
#include "elapsed.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "shardkit/error.hpp"
#include "shardkit/ledger.hpp"
#include "shardkit/logging.hpp"
#include "train_options.hpp"

namespace shardkit::train {

EvalResult evaluate(Backend& backend, Policy& policy, const Dataset& data, std::int64_t batch_size, CommGroup& dp,
                    const std::function<void(Batch&)>& transform, const std::string& device,
                    std::int64_t limit) {
  const std::int64_t size = limit > 0 ? std::min(limit, data.size()) : data.size();
  const std::int64_t global = batch_size * dp.size();
  const std::int64_t batches = size / global;
  if (batches < 1)
    throw ConfigError("the validation split has " + std::to_string(size) + " samples, fewer than one global "
                      "batch of --batch_size=" + std::to_string(batch_size) + " x " + std::to_string(dp.size()) +
                      " dp workers; give it more samples or lower --batch_size");
  torch::NoGradGuard no_grad;
  policy.eval();
  double sum = 0, count = 0;
  bool summed = false;
  for (std::int64_t b = 0; b < batches; ++b) {
    std::vector<std::int64_t> indices;
    for (std::int64_t i = 0; i < batch_size; ++i) indices.push_back(b * global + i * dp.size() + dp.rank());
    auto batch = data.get_batch(indices);
    if (transform) transform(batch);
    for (auto& [key, tensor] : batch) tensor = tensor.to(torch::Device(device));
    backend.begin_micro_step(false);
    const auto out = backend.forward(policy, batch);
    summed = out.normalizer.defined();
    sum += out.loss.item<double>();
    count += summed ? out.normalizer.item<double>() : 1.0;
  }
  policy.train();
  auto totals = torch::tensor({sum, count}, torch::kFloat64);
  {
    CollectiveScope scope("trainer, evaluation");
    dp.all_reduce(totals, ReduceOp::Sum)->wait();
  }
  EvalResult result;
  result.loss = totals[0].item<double>() / std::max(1e-300, totals[1].item<double>());
  result.samples = batches * global;
  result.left_out = size - result.samples;
  return result;
}

EvalSchedule EvalSchedule::from(std::int64_t eval_freq, std::int64_t eval_steps, const std::string& strategy) {
  if (eval_freq > 0 && eval_steps > 0)  // check_evaluation_flags refuses this before
    throw ConfigError("--eval_freq and --eval_steps are both set; give one");
  if (strategy == "epoch") return {"eval_strategy", 0, true, true};
  if (eval_steps > 0) return {"eval_steps", eval_steps, false};
  return {"eval_freq", eval_freq, true};
}

Evaluation::Evaluation(const Registry& registry, const Config& config, const Runtime& runtime,
                       const std::string& dataset, const Policy& policy, const EvalSchedule& schedule,
                       std::int64_t accum, std::int64_t max_samples)
    : schedule_(schedule), config_(config) {
  if (schedule.every > 0 && schedule.every % accum != 0)
    throw ConfigError("--" + schedule.flag + "=" + std::to_string(schedule.every) + " is not a multiple of "
                      "--accelerator.gradient_accumulation.steps=" + std::to_string(accum) +
                      ": evaluation runs at optimizer updates");
  config_.set("dataset.split", std::string("validation"));
  if (max_samples > 0 && config_.has("dataset.max_eval_samples"))
    config_.set("dataset.max_eval_samples", max_samples);
  else
    limit_ = max_samples;
  dataset_ = registry.create_as<Dataset>("dataset", dataset, plugin_context(config_, runtime, "dataset", dataset));
  dataset_->set_delta_indices(policy.delta_indices());
  const auto samples = limit_ > 0 ? std::min(limit_, dataset_->size()) : dataset_->size();
  logger()->info("evaluation every {} steps{} on the validation split ({} samples)", schedule.every,
                 schedule.at_last ? " and at the last" : "", samples);
}

std::map<std::string, double> Evaluation::run(std::int64_t step, Backend& backend, Policy& policy,
                                              std::int64_t batch_size, CommGroup& dp,
                                              const std::function<void(Batch&)>& transform,
                                              const std::string& device) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto result = evaluate(backend, policy, *dataset_, batch_size, dp, transform, device, limit_);
  logger()->info("evaluation at step {}: loss {:.5g} | perplexity {:.5g} | {} samples{} in {:.1f} s", step,
                 result.loss, std::exp(result.loss), result.samples,
                 result.left_out ? fmt::format(" ({} of the last partial batch left out)", result.left_out) : "",
                 seconds_since(t0));
  // LeRobot main's --eval_steps logs eval_loss alone; --eval_freq (language models too) its perplexity.
  if (!schedule_.at_last) return {{"eval_loss", result.loss}};
  return {{"eval_loss", result.loss}, {"eval_perplexity", std::exp(result.loss)}};
}

}  // namespace shardkit::train
