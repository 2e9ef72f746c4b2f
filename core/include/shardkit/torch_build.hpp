// What the LibTorch in this process was built with, read from LibTorch itself; and CUDA on demand.
//
// shardkit's CPU code links libtorch_cpu only, so a CPU run never loads CUDA libraries.
// load_cuda() loads the libtorch_cuda that sits beside the libtorch_cpu in use (as
// Python's `import torch` does), after which torch::cuda::is_available() and CUDA
// tensors work in this process.
//
//   std::string why;
//   if (!shardkit::load_cuda(&why)) throw shardkit::ConfigError("no CUDA: " + why);
#pragma once

#include <string>

namespace shardkit {

/// A LibTorch build, as LibTorch reports it (at::show_config() and friends).
struct TorchBuild {
  std::string version;         ///< "2.15.0"
  std::string cuda_version;    ///< CUDA it was built with, "13.2"; "" for a CPU-only build
  std::string cudnn_version;   ///< "9.26.0"; "" when none
  std::string blas;            ///< BLAS_INFO, e.g. "mkl"
  std::string cpu_capability;  ///< the kernels' instruction set in use: "AVX512", "AVX2", ...
  bool gloo = false;           ///< built with Gloo (USE_GLOO)
  bool nccl = false;           ///< built with NCCL (USE_NCCL)
  std::string nccl_version;    ///< the NCCL library loaded, "2.30.7"; "" until load_cuda()
  std::string cudart_version;  ///< the CUDA runtime loaded, "13.2"; "" until load_cuda()
  int cuda_devices = 0;        ///< visible CUDA devices; 0 until load_cuda() or without GPU
};

/// Reads the build of the LibTorch in this process. CUDA runtime fields are filled only
/// once load_cuda() has succeeded.
TorchBuild torch_build();

/// Loads libtorch_cuda (with the CUDA and NCCL libraries it needs) from the folder of the
/// libtorch_cpu in use, once per process. Returns false and sets `why` when this LibTorch
/// has no CUDA build or the libraries cannot be loaded. Having a GPU is not required:
/// check torch::cuda::device_count() afterwards.
bool load_cuda(std::string* why);

}  // namespace shardkit
