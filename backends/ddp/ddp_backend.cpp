// Backend `ddp`: whole replicas on every rank, gradients all-reduced in buckets that overlap backward.
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include <shardkit/backend.hpp>
#include <shardkit/broadcast.hpp>
#include <shardkit/comm.hpp>
#include <shardkit/config.hpp>
#include <shardkit/error.hpp>
#include <shardkit/mesh.hpp>
#include <shardkit/module_state.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/runtime.hpp>

#include "grad_reducer.hpp"

namespace {

using shardkit::ddp::GradReducer;
using shardkit::ddp::ReducerOptions;

class DdpBackend final : public shardkit::WholeParameterBackend {
 public:
  explicit DdpBackend(const shardkit::PluginContext& ctx) : WholeParameterBackend("ddp", ctx), logger_(ctx.logger) {
    const auto& o = ctx.options;
    const double cap_mb = o.get_float("bucket_cap_mb");
    if (!(cap_mb > 0))
      throw shardkit::ConfigError("--accelerator.ddp.bucket_cap_mb=" + shardkit::to_string(shardkit::Value(cap_mb)) +
                                  ": must be greater than 0 (megabytes per gradient bucket, e.g. 25)");
    cap_mb_ = cap_mb;
    options_.bucket_cap_bytes = static_cast<std::int64_t>(cap_mb * 1024.0 * 1024.0);
    if (options_.bucket_cap_bytes < 1) options_.bucket_cap_bytes = 1;
    options_.find_unused_parameters = o.get_bool("find_unused_parameters");
    options_.overlap = o.get_bool("overlap");
    broadcast_buffers_ = o.get_bool("broadcast_buffers");
    // LeRobot main passes these to PyTorch's DDP; shardkit's reducer has no use for them.
    for (const auto* flag : {"gradient_as_bucket_view", "static_graph"})
      if (o.get_bool(flag) && logger_)
        logger_->info("ddp: --accelerator.ddp.{}=true changes nothing here (the reducer already all-reduces "
                      "bucket copies in place and rebuilds nothing per step); accepted for LeRobot's command lines",
                      flag);
    if (ctx.mesh) {
      group_ = &ctx.mesh->dp_group();
    } else {
      if (ctx.runtime && ctx.runtime->multi_process())
        throw shardkit::RuntimeError(
            "backend ddp was started without the run's device mesh on rank " +
            std::to_string(ctx.runtime->rank) + " of WORLD_SIZE=" +
            std::to_string(ctx.runtime->world_size) + "; the host must pass PluginContext::mesh");
      local_group_ = shardkit::make_local_group("dp");
      group_ = local_group_.get();
    }
    set_replicas(shardkit::Replicas::among(group_->rank(), group_->size()));
  }

  void setup(shardkit::Policy& policy) override {
    WholeParameterBackend::setup(policy);
    // Ranks start identical whatever their seeds: rank 0's parameters and buffers win.
    std::vector<torch::Tensor> tensors;
    for (const auto& p : policy.parameters()) tensors.push_back(p);
    for (const auto& b : policy.buffers()) tensors.push_back(b);
    shardkit::broadcast_from_rank0(*group_, tensors);
    buffers_ = policy.buffers();

    auto params = parameters();
    const auto num_params = params.size();
    reducer_ = std::make_unique<GradReducer>(std::move(params), *group_, options_);
    if (logger_)
      logger_->info("ddp: {} buckets (cap {} MB) over {} parameters, world {}",
                    reducer_->num_buckets(), cap_mb_, num_params, group_->size());
  }

  void begin_micro_step(bool sync) override { reducer().set_sync(sync); }

  void finish_gradients() override {
    reducer().finish();
    // Buffers (e.g. running statistics) drift apart in forward; rank 0's win, as with
    // PyTorch's broadcast_buffers, so the next forward starts from identical buffers.
    if (broadcast_buffers_ && !buffers_.empty())
      shardkit::broadcast_from_rank0(*group_, buffers_);
  }

 private:
  GradReducer& reducer() const {
    if (!reducer_) throw shardkit::RuntimeError("backend ddp: setup() must be called first");
    return *reducer_;
  }

  std::shared_ptr<spdlog::logger> logger_;
  ReducerOptions options_;
  double cap_mb_ = 25;
  bool broadcast_buffers_ = true;
  std::shared_ptr<shardkit::CommGroup> local_group_;
  shardkit::CommGroup* group_ = nullptr;  // the mesh's dp group (the mesh outlives us)
  std::vector<torch::Tensor> buffers_;
  std::unique_ptr<GradReducer> reducer_;
};

const shardkit::OptionSpec kOptions[] = {
    {"bucket_cap_mb", shardkit::OptionType::Float, "25",
     "Size cap of each gradient all-reduce bucket, in MB (MiB); > 0", "0", nullptr, nullptr},
    {"find_unused_parameters", shardkit::OptionType::Bool, "false",
     "Allow parameters that get no gradient in a step (counted as zeros)", nullptr, nullptr, nullptr},
    {"overlap", shardkit::OptionType::Bool, "true",
     "Launch bucket all-reduces during backward (false: all after backward, for benchmarks)",
     nullptr, nullptr, nullptr},
    {"broadcast_buffers", shardkit::OptionType::Bool, "true",
     "Copy rank 0's buffers to every rank after each backward", nullptr, nullptr, nullptr},
    {"gradient_as_bucket_view", shardkit::OptionType::Bool, "false",
     "LeRobot main's DDP option (PyTorch: gradients as views into the buckets): accepted, no effect here",
     nullptr, nullptr, nullptr},
    {"static_graph", shardkit::OptionType::Bool, "false",
     "LeRobot main's DDP option (PyTorch: the graph never changes): accepted, no effect here", nullptr, nullptr,
     nullptr},
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return std::make_shared<DdpBackend>(ctx);
}

}  // namespace

SHARDKIT_PLUGIN_WITH_TRAITS(
    backend, ddp, "0.1.0",
    "Data parallel: replicas on every rank, bucketed gradient all-reduce overlapping backward",
    kOptions, make, shardkit::kMultiProcess | shardkit::kPreferredByAuto)
