// The GPU suite's main: runs the Catch2 cases on a machine with a CUDA device, else exits 77
// (CTest reports the suite as skipped, visibly, and counts it).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>

#include <torch/cuda.h>

#include "shardkit/torch_build.hpp"

int main(int argc, char** argv) {
  std::string why;
  if (!shardkit::load_cuda(&why)) {
    std::cout << "SKIPPED: the GPU suite needs CUDA: " << why << std::endl;
    return 77;
  }
  if (torch::cuda::device_count() == 0) {
    std::cout << "SKIPPED: the GPU suite needs a CUDA device; none is visible" << std::endl;
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
