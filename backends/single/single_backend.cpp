// Backend `single`: one process, no communication.
#include <shardkit/backend.hpp>
#include <shardkit/module_state.hpp>
#include <shardkit/plugin.hpp>

namespace {

class SingleBackend final : public shardkit::WholeParameterBackend {
 public:
  // One process only: the host refuses it under a launcher (it does not declare
  // shardkit::kMultiProcess).
  explicit SingleBackend(const shardkit::PluginContext& ctx) : WholeParameterBackend("single", ctx) {}

  void begin_micro_step(bool) override {}
  void finish_gradients() override {}
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return std::make_shared<SingleBackend>(ctx);
}

}  // namespace

SHARDKIT_PLUGIN_WITH_TRAITS(backend, single, "0.1.0", "One process, no communication (the default for one process)",
                            SHARDKIT_PLUGIN_NO_OPTIONS, make, shardkit::kPreferredByAuto)
