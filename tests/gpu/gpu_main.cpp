// The GPU suite's main: runs the Catch2 cases on a machine with a CUDA device, else exits 77
// (CTest reports the suite as skipped, visibly, and counts it).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <torch/cuda.h>

#include "shardkit/torch_build.hpp"
#include "skip.hpp"

int main(int argc, char** argv) {
  std::string why;
  if (!shardkit::load_cuda(&why)) return shardkit::test::skip_executable("the GPU suite needs CUDA: " + why);
  if (torch::cuda::device_count() == 0)
    return shardkit::test::skip_executable("the GPU suite needs a CUDA device; none is visible");
  return shardkit::test::exit_status(Catch::Session().run(argc, argv));
}
