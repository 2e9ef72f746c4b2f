// libshardkit_nccl_impl.so's entry: creates the NcclComm for the plugin's shim.
#include "nccl_impl_entry.hpp"

#include "nccl_comm.hpp"

extern "C" __attribute__((visibility("default"))) std::shared_ptr<shardkit::Plugin>
shardkit_nccl_create(const shardkit::PluginContext& context, std::string& error) noexcept {
  try {
    return std::make_shared<shardkit::nccl::NcclComm>(context);
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "unknown error";
  }
  return nullptr;
}

