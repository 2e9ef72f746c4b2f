// The entry of the comm plugin `gloo`.
#include <shardkit/plugin.hpp>

#include "gloo_comm.hpp"

namespace {

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& context) {
  return std::make_shared<shardkit::gloo::GlooComm>(context);
}

}  // namespace

SHARDKIT_PLUGIN(comm, gloo, "0.1.0", "PyTorch c10d Gloo over TCP (CPU tensors)",
                SHARDKIT_PLUGIN_NO_OPTIONS, make)
