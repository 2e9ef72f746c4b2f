// Helpers for the ddp tests: a tiny policy, a scripted two-rank group, and the plugin from the build.
#pragma once

#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <shardkit/backend.hpp>
#include <shardkit/comm.hpp>
#include <shardkit/config.hpp>
#include <shardkit/error.hpp>
#include <shardkit/loader.hpp>
#include <shardkit/mesh.hpp>
#include <shardkit/policy.hpp>

#include "scripted_group.hpp"

namespace shardkit::test {

/// fc1 -> tanh -> fc2 regression, a buffer, and a `spare` layer that forward uses only
/// when `use_spare` is set (registered last, so its gradients are ready first).
class TinyPolicy : public Policy {
 public:
  TinyPolicy() {
    fc1 = register_module("fc1", torch::nn::Linear(4, 8));
    fc2 = register_module("fc2", torch::nn::Linear(8, 2));
    spare = register_module("spare", torch::nn::Linear(4, 2));
    seen = register_buffer("seen", torch::zeros({1}));
  }
  PolicyOutput forward(const Batch& batch) override {
    const auto& x = batch.at("observation.state");
    auto out = fc2->forward(torch::tanh(fc1->forward(x)));
    if (use_spare) out = out + spare->forward(x);
    seen.add_(1);
    return {torch::mse_loss(out, batch.at("action")), {}};
  }
  torch::Tensor select_action(const Batch& batch) override {
    return fc2->forward(torch::tanh(fc1->forward(batch.at("observation.state"))));
  }
  std::vector<std::string> wrap_modules() const override { return {}; }

  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, spare{nullptr};
  torch::Tensor seen;
  bool use_spare = true;
};

/// Two policies with the same weights (the copy is the no-backend reference).
inline std::shared_ptr<TinyPolicy> copy_of(const TinyPolicy& source) {
  auto copy = std::make_shared<TinyPolicy>();
  torch::NoGradGuard no_grad;
  auto from = source.named_parameters();
  for (auto& item : copy->named_parameters()) item.value().copy_(from[item.key()]);
  copy->use_spare = source.use_spare;
  return copy;
}

inline Batch batch_of(std::int64_t seed) {
  torch::manual_seed(seed);
  return {{"observation.state", torch::randn({5, 4})}, {"action", torch::randn({5, 2})}};
}

/// The built ddp plugin, its options resolved from `flags` ("key" -> "value").
struct DdpPlugin {
  DdpPlugin() {
    registry.load_file(std::string(SHARDKIT_PLUGIN_DIR) + "/libshardkit-backend-ddp.so");
    log_sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
    logger = std::make_shared<spdlog::logger>("ddp-test", log_sink);
  }
  std::shared_ptr<Backend> create(const std::map<std::string, std::string>& flags = {},
                                  DeviceMesh* mesh = nullptr) {
    const auto* descriptor = registry.get("backend", "ddp").descriptor;
    Schema schema;
    schema.add("", descriptor->options, descriptor->num_options, "backend 'ddp'");
    RawConfig raw;
    for (const auto& [key, value] : flags) raw[key] = RawValue{value, "--accelerator.ddp." + key};
    PluginContext ctx;
    ctx.options = resolve(schema, {}, raw);
    ctx.logger = logger;
    ctx.mesh = mesh;
    return registry.create_as<Backend>("backend", "ddp", ctx);
  }
  Registry registry;
  std::ostringstream log;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> log_sink;
  std::shared_ptr<spdlog::logger> logger;
};

/// One training micro-step through `backend`.
inline void micro_step(Backend& backend, TinyPolicy& policy, const Batch& batch, bool sync) {
  backend.begin_micro_step(sync);
  policy.forward(batch).loss.backward();
  backend.finish_gradients();
}

}  // namespace shardkit::test
