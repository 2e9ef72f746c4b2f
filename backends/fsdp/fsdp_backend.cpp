// Backend `fsdp`: FSDP2 semantics (dim-0 shards per wrap unit, HSDP with dp_replicate > 1) on core's sharding engine.
#include <memory>

#include <spdlog/logger.h>

#include <shardkit/config.hpp>
#include <shardkit/error.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/runtime.hpp>
#include <shardkit/sharding.hpp>

namespace {

shardkit::ShardingOptions options_from(const shardkit::PluginContext& ctx) {
  shardkit::ShardingOptions o;
  o.backend = "fsdp";
  o.option_prefix = "--accelerator.fsdp.";
  o.style = shardkit::ShardStyle::Rows;
  o.shard_parameters = true;
  o.reduce_scatter = true;
  o.reshard_after_forward = ctx.options.get_bool("reshard_after_forward");
  shardkit::read_wrap_options(ctx.options, o);
  shardkit::PrecisionFields fields;
  fields.prefix = "--accelerator.fsdp.mixed_precision_policy.";
  fields.param_dtype = ctx.options.get_string("mixed_precision_policy.param_dtype");
  fields.reduce_dtype = ctx.options.get_string("mixed_precision_policy.reduce_dtype");
  fields.output_dtype = ctx.options.get_string("mixed_precision_policy.output_dtype");
  fields.cast_forward_inputs = ctx.options.get_bool("mixed_precision_policy.cast_forward_inputs");
  o.precision = shardkit::precision_of(ctx, fields);
  o.cpu_offload = ctx.options.get_bool("cpu_offload");
  const bool cuda = ctx.runtime != nullptr && ctx.runtime->device.rfind("cuda", 0) == 0;
  if (o.cpu_offload && !cuda && ctx.logger)
    ctx.logger->info("fsdp: --accelerator.fsdp.cpu_offload=true: nothing to offload on a CPU run (parameters, "
                     "gradients and optimizer state already live in host memory)");
  return o;
}

class FsdpBackend final : public shardkit::ShardedBackend {
 public:
  explicit FsdpBackend(const shardkit::PluginContext& ctx) : ShardedBackend(ctx, options_from(ctx)) {}
};

const shardkit::OptionSpec kOptions[] = {
    {"wrap_modules", shardkit::OptionType::String, "",
     "Block classes that become wrap units, as a JSON list '[\"Cls\"]' (default: the policy's wrap_modules())",
     nullptr, nullptr, nullptr},
    {"min_num_params", shardkit::OptionType::Int, "0",
     "Without wrap_modules: every outermost block with at least this many parameters is a unit (0: off)", "0",
     nullptr, nullptr},
    {"reshard_after_forward", shardkit::OptionType::Bool, "true",
     "Free a unit's gathered parameters after its forward and gather them again for backward", nullptr, nullptr,
     nullptr},
    {"prefetch", shardkit::OptionType::Bool, "true",
     "Gather the next unit's parameters while the current one computes (forward and backward)", nullptr, nullptr,
     nullptr},
    {"ignored_modules", shardkit::OptionType::String, "",
     "Regex over module names: matching modules stay whole on every rank (gradients still averaged)", nullptr,
     nullptr, nullptr},
    {"mixed_precision_policy.param_dtype", shardkit::OptionType::String, "",
     "Compute dtype of gathered parameters (bfloat16, float16, float32); setting any field builds the policy from "
     "the fields only", nullptr, nullptr, nullptr},
    {"mixed_precision_policy.reduce_dtype", shardkit::OptionType::String, "",
     "Dtype gradients are reduced in (unset: the parameters' own, float32)", nullptr, nullptr, nullptr},
    {"mixed_precision_policy.output_dtype", shardkit::OptionType::String, "", "Dtype the loss is cast to (unset: as computed)",
     nullptr, nullptr, nullptr},
    {"mixed_precision_policy.cast_forward_inputs", shardkit::OptionType::Bool, "true",
     "Cast floating inputs of the model and of each unit to param_dtype", nullptr, nullptr, nullptr},
    {"cpu_offload", shardkit::OptionType::Bool, "false",
     "FSDP2's CPUOffloadPolicy on CUDA runs: sharded parameters, their gradients and the optimizer state in pinned "
     "host memory, the optimizer stepping on the CPU, each unit's shard copied to the GPU for its gather (no effect on "
     "CPU runs)", nullptr,
     nullptr, nullptr},
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return std::make_shared<FsdpBackend>(ctx);
}

}  // namespace

SHARDKIT_PLUGIN_CLASS(
    backend, fsdp, "0.1.0",
    "Fully sharded data parallel (FSDP2 semantics): parameters, gradients and optimizer state sharded on dim 0 "
    "per wrap unit; HSDP with --parallelism.dp_replicate > 1",
    kOptions, make, shardkit::kShardsParameters | shardkit::kMultiProcess | shardkit::kPreferredByAuto,
    FsdpBackend)
