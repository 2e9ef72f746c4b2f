// Reading LibTorch's build settings, and loading libtorch_cuda on demand beside libtorch_cpu.
#include "shardkit/torch_build.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <map>
#include <mutex>

#include <ATen/Version.h>
#include <caffe2/core/common.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/version.h>

namespace shardkit {
namespace {

// LibTorch's CMake build options (TORCH_VERSION, USE_CUDA, CUDA_VERSION, BLAS_INFO, ...),
// read without at::show_config(): that asks hasCUDA(), and the first CUDA-hooks lookup made
// before libtorch_cuda is loaded would leave this process with the CPU stub for good.
std::map<std::string, std::string> build_settings() { return caffe2::GetBuildOptions(); }

bool is_on(const std::string& value) { return value == "ON" || value == "1" || value == "TRUE"; }

// CUDART_VERSION 13020 -> "13.2".
std::string cudart_text(long version) {
  if (version <= 0) return "";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// NCCL_VERSION_CODE 23007 -> "2.30.7" (the encoding since NCCL 2.9).
std::string nccl_text(int code) {
  return std::to_string(code / 10000) + "." + std::to_string(code % 10000 / 100) + "." +
         std::to_string(code % 100);
}

struct CudaState {
  std::once_flag once;
  bool loaded = false;
  std::string why;
};

CudaState& cuda_state() {
  static CudaState state;
  return state;
}

// The folder of the libtorch_cpu this process runs: libtorch_cuda must come from the same build.
std::string torch_library_dir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&at::show_config), &info) == 0 || !info.dli_fname)
    return "";
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

}  // namespace

bool load_cuda(std::string* why) {
  auto& state = cuda_state();
  std::call_once(state.once, [&state] {
    if (!is_on(build_settings()["USE_CUDA"])) {
      state.why = "this LibTorch " + std::string(TORCH_VERSION) + " is a CPU-only build";
      return;
    }
    const auto dir = torch_library_dir();
    const auto path = (std::filesystem::path(dir) / "libtorch_cuda.so").string();
    // RTLD_GLOBAL: libtorch_cuda registers its CUDA hooks and kernels with libtorch_cpu,
    // and NCCL's symbols become reachable as they are under Python.
    if (::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      const char* error = ::dlerror();
      state.why = "cannot load " + path + ": " + (error ? error : "unknown error");
      return;
    }
    state.loaded = true;
  });
  if (!state.loaded && why) *why = state.why;
  return state.loaded;
}

TorchBuild torch_build() {
  auto settings = build_settings();
  TorchBuild build;
  build.version = settings.count("TORCH_VERSION") ? settings["TORCH_VERSION"] : TORCH_VERSION;
  if (is_on(settings["USE_CUDA"])) {
    build.cuda_version = settings["CUDA_VERSION"];
    build.cudnn_version = settings["CUDNN_VERSION"];
  }
  build.blas = settings["BLAS_INFO"];
  build.cpu_capability = at::get_cpu_capability();
  build.gloo = is_on(settings["USE_GLOO"]);
  build.nccl = is_on(settings["USE_NCCL"]);
  if (cuda_state().loaded) {
    const auto& hooks = at::detail::getCUDAHooks();
    try {
      build.cudart_version = cudart_text(hooks.versionCUDART());
      build.cuda_devices = hooks.getNumGPUs();
    } catch (...) {
      // The stub hooks throw: libtorch_cuda registered nothing.
    }
    using GetVersion = int (*)(int*);
    if (auto get = reinterpret_cast<GetVersion>(::dlsym(RTLD_DEFAULT, "ncclGetVersion"))) {
      int code = 0;
      if (get(&code) == 0 && code > 0) build.nccl_version = nccl_text(code);
    }
  }
  return build;
}

}  // namespace shardkit
