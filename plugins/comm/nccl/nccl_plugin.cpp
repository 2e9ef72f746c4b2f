// The entry of the comm plugin `nccl`: a light shim that loads the CUDA half only when created.
//
// Every shardkit process loads every plugin it finds to read its descriptor. Linking
// libtorch_cuda here would add ~0.3 s and ~370 MB of resident memory to every CPU run, so
// this library links only the core; its factory loads LibTorch's CUDA libraries and then
// libshardkit_nccl_impl.so (beside this file), which holds ProcessGroupNCCL.
#include <dlfcn.h>

#include <filesystem>

#include <shardkit/error.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/torch_build.hpp>

#include "nccl_impl_entry.hpp"

namespace {

std::string this_library_dir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&this_library_dir), &info) == 0 || !info.dli_fname)
    return ".";
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& context) {
  std::string why;
  if (!shardkit::load_cuda(&why))
    throw shardkit::ConfigError("comm 'nccl' needs CUDA: " + why +
                                "; use --distributed.comm=gloo for CPU tensors");
  const auto path = this_library_dir() + "/" + shardkit::nccl::kImplLibrary;
  void* impl = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept loaded until exit
  if (impl == nullptr) {
    const char* error = ::dlerror();
    throw shardkit::PluginError("comm 'nccl': cannot load " + path + ": " +
                                (error ? error : "unknown error") +
                                "; reinstall shardkit with its CUDA parts");
  }
  auto create = reinterpret_cast<shardkit::nccl::CreateFn>(::dlsym(impl, shardkit::nccl::kImplEntry));
  if (create == nullptr)
    throw shardkit::PluginError("comm 'nccl': " + path + " has no entry '" +
                                shardkit::nccl::kImplEntry + "'; it belongs to another shardkit");
  std::string error;
  std::shared_ptr<shardkit::Plugin> comm = create(context, error);
  if (!comm) throw shardkit::RuntimeError("comm 'nccl': " + error);
  return comm;
}

}  // namespace

SHARDKIT_PLUGIN(comm, nccl, "0.1.0", "PyTorch c10d NCCL (CUDA tensors, one GPU per rank)",
                SHARDKIT_PLUGIN_NO_OPTIONS, make)
