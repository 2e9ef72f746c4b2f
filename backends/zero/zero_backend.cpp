// Backend `zero`: DeepSpeed-style ZeRO stages 1-3 (flat partitions) on core's sharding engine.
#include <memory>

#include <spdlog/logger.h>

#include <shardkit/config.hpp>
#include <shardkit/error.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/sharding.hpp>

#include "deepspeed_config.hpp"

namespace {

shardkit::ShardingOptions options_from(const shardkit::PluginContext& ctx) {
  const auto& c = ctx.options;
  shardkit::ShardingOptions o;
  o.backend = "zero";
  o.option_prefix = "--accelerator.zero.";
  o.style = shardkit::ShardStyle::Flat;
  const auto stage = c.get_int("stage");
  if (stage < 1 || stage > 3)
    throw shardkit::ConfigError("--accelerator.zero.stage=" + std::to_string(stage) +
                                ": must be 1 (optimizer state), 2 (+ gradients) or 3 (+ parameters)");
  o.shard_parameters = stage == 3;
  o.reduce_scatter = stage >= 2;
  o.reshard_after_forward = true;
  shardkit::read_wrap_options(c, o);
  o.persistence_threshold = stage == 3 ? c.get_int("stage3_param_persistence_threshold") : 0;
  o.bucket_numel = c.get_int("reduce_bucket_size");
  o.precision = shardkit::precision_of(ctx);
  return o;
}

class ZeroBackend final : public shardkit::ShardedBackend {
 public:
  explicit ZeroBackend(const shardkit::PluginContext& ctx) : ShardedBackend(ctx, options_from(ctx)) {}
};

const shardkit::OptionSpec kOptions[] = {
    {"stage", shardkit::OptionType::Int, "3",
     "ZeRO stage: 1 shards optimizer state, 2 also gradients, 3 also parameters", "1", "3", nullptr},
    {"config_file", shardkit::OptionType::String, "",
     "A DeepSpeed JSON config (ds_config.json): zero_optimization, batch sizes, clipping; \"auto\" takes shardkit's "
     "values, a contradiction with a flag is an error", nullptr, nullptr, nullptr},
    {"reduce_bucket_size", shardkit::OptionType::Int, "0",
     "Stages 1-2: elements per gradient bucket reduced together; 0 = auto: DeepSpeed's 5e8 (at stage 2 an eighth "
     "of the model when smaller)", "0", nullptr, nullptr},
    {"stage3_param_persistence_threshold", shardkit::OptionType::Int, "100000",
     "Stage 3: parameters with at most this many elements stay whole on every rank", "0", nullptr, nullptr},
    {"wrap_modules", shardkit::OptionType::String, "",
     "Stage 3: block classes gathered together, as a JSON list '[\"Cls\"]' (default: the policy's)", nullptr,
     nullptr, nullptr},
    {"min_num_params", shardkit::OptionType::Int, "0",
     "Stage 3 without wrap_modules: outermost blocks with at least this many parameters are units", "0", nullptr,
     nullptr},
    {"prefetch", shardkit::OptionType::Bool, "true", "Stage 3: gather the next unit while one computes", nullptr,
     nullptr, nullptr},
    {"ignored_modules", shardkit::OptionType::String, "",
     "Regex over module names: matching modules stay whole on every rank", nullptr, nullptr, nullptr},
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return std::make_shared<ZeroBackend>(ctx);
}

}  // namespace

// AITraining's --distributed_backend=deepspeed means ZeRO stage 3 (zero's default stage); a DeepSpeed
// config file named by --accelerator.zero.config_file sets zero's options and the batch layout.
constexpr shardkit::PluginHooks kHooks{"deepspeed", shardkit::zero::read_deepspeed_config,
                                       shardkit::zero::check_deepspeed_batch};

SHARDKIT_PLUGIN_CLASS_HOOKS(
    backend, zero, "0.1.0",
    "DeepSpeed-style ZeRO: stage 1 shards optimizer state, 2 also gradients, 3 also parameters (flat partitions)",
    kOptions, make, shardkit::kShardsParameters | shardkit::kMultiProcess, ZeroBackend, kHooks)
