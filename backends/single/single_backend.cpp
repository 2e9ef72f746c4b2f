// Backend `single`: one process, no communication; refuses to run under a multi-process launcher.
#include <shardkit/backend.hpp>
#include <shardkit/error.hpp>
#include <shardkit/module_state.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/runtime.hpp>

namespace {

class SingleBackend final : public shardkit::WholeParameterBackend {
 public:
  explicit SingleBackend(const shardkit::PluginContext& ctx) : WholeParameterBackend("single") {
    if (ctx.runtime && ctx.runtime->multi_process())
      throw shardkit::ConfigError(
          "--distributed_backend=single runs one process, but this process is rank " +
          std::to_string(ctx.runtime->rank) + " of WORLD_SIZE=" +
          std::to_string(ctx.runtime->world_size) +
          "; two processes must never train two models into one folder: use "
          "--distributed_backend=auto (or ddp) under a launcher, or start one process");
  }

  void set_gradient_sync(bool) override {}
  void finish_gradients() override {}
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return std::make_shared<SingleBackend>(ctx);
}

}  // namespace

SHARDKIT_PLUGIN(backend, single, "0.1.0", "One process, no communication (the default for one process)",
                SHARDKIT_PLUGIN_NO_OPTIONS, make)
