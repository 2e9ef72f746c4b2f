// The LibTorch build report (from LibTorch itself) and loading CUDA on demand, on any machine.
#include <catch2/catch.hpp>

#include <torch/cuda.h>

#include "shardkit/torch_build.hpp"

TEST_CASE("the LibTorch in use reports its own build", "[compat][torch]") {
  const auto build = shardkit::torch_build();
  CHECK(build.version == "2.15.0");
  CHECK_FALSE(build.blas.empty());
  CHECK_FALSE(build.cpu_capability.empty());
  CHECK(build.gloo);
}

TEST_CASE("load_cuda loads the CUDA half of a CUDA LibTorch, even without a GPU", "[compat][cuda]") {
  const auto before = shardkit::torch_build();
  std::string why;
  const bool loaded = shardkit::load_cuda(&why);
  INFO(why);
  if (before.cuda_version.empty()) {
    // A CPU-only LibTorch (the libtorch archive): refused with the reason.
    CHECK_FALSE(loaded);
    CHECK(why.find("CPU-only build") != std::string::npos);
    return;
  }
  REQUIRE(loaded);
  CHECK(shardkit::load_cuda(nullptr));  // once per process; the second call is free
  const auto after = shardkit::torch_build();
  INFO("cudart " << after.cudart_version << ", nccl " << after.nccl_version << ", built with CUDA " << before.cuda_version);
  // Only the real CUDA hooks (registered by libtorch_cuda) know the runtime's version.
  CHECK(after.cudart_version.rfind(before.cuda_version.substr(0, 3), 0) == 0);
  // The NCCL that libtorch_cuda loaded: the wheel's, new enough for LibTorch 2.15.
  REQUIRE_FALSE(after.nccl_version.empty());
  CHECK(after.nccl_version.rfind("2.", 0) == 0);
  CHECK(std::stoi(after.nccl_version.substr(2)) >= 30);
  CHECK(after.cuda_devices == static_cast<int>(torch::cuda::device_count()));
}
