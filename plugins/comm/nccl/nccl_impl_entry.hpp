// The one function libshardkit_nccl_impl.so exports to the nccl plugin's shim.
#pragma once

#include <memory>
#include <string>

#include <shardkit/plugin.hpp>

namespace shardkit::nccl {

/// The library beside the plugin that holds ProcessGroupNCCL (and links libtorch_cuda).
inline constexpr const char* kImplLibrary = "libshardkit_nccl_impl.so";
inline constexpr const char* kImplEntry = "shardkit_nccl_create";

/// Creates the NcclComm; on failure returns nullptr and sets `error`. Never throws.
using CreateFn = std::shared_ptr<Plugin> (*)(const PluginContext& context, std::string& error);

}  // namespace shardkit::nccl
