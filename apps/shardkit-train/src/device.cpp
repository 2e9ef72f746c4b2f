// --policy.device resolution (CUDA loaded on demand) and the transport/device check.
#include "device.hpp"

#include <cstdlib>

#include <torch/cuda.h>

#include "shardkit/error.hpp"
#include "shardkit/torch_build.hpp"

namespace shardkit::train {
namespace {

bool is_cuda(const std::string& device) { return device.rfind("cuda", 0) == 0; }

std::string visible_devices_note() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return visible ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : "";
}

}  // namespace

std::string resolve_device(const std::string& requested, int local_rank) {
  if (requested == "cpu") return requested;
  const auto flag = "--policy.device=" + requested;
  int index = local_rank;
  if (requested != "cuda") {
    const auto digits = requested.size() > 5 ? requested.substr(5) : "";
    if (requested.rfind("cuda:", 0) != 0 || digits.empty() ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      throw ConfigError(flag + ": expected cpu, cuda (cuda:LOCAL_RANK per process) or cuda:N");
    index = std::stoi(digits);
  }
  std::string why;
  if (!load_cuda(&why))
    throw ConfigError(flag + ": CUDA is not available: " + why +
                      "; use --policy.device=cpu, or build shardkit against a CUDA LibTorch "
                      "(scripts/setup.sh installs one)");
  const int count = static_cast<int>(torch::cuda::device_count());
  if (count == 0)
    throw ConfigError(flag + ": no CUDA device is visible to this process" +
                      visible_devices_note() +
                      "; check the driver (nvidia-smi) or use --policy.device=cpu");
  if (index >= count)
    throw ConfigError(flag + ": this process needs cuda:" + std::to_string(index) + " but " +
                      std::to_string(count) + " CUDA device(s) are visible" +
                      visible_devices_note() +
                      "; start at most that many processes per node (--nproc-per-node)");
  return "cuda:" + std::to_string(index);
}

void check_comm_device(const std::string& comm, const std::string& device) {
  if (comm == "nccl" && !is_cuda(device))
    throw ConfigError("--distributed.comm=nccl moves CUDA tensors only, but this run computes on " +
                      device + "; use --distributed.comm=auto (gloo for cpu) or "
                      "--policy.device=cuda");
  if (comm == "gloo" && is_cuda(device))
    throw ConfigError("--distributed.comm=gloo moves CPU tensors only, but this run computes on " +
                      device + "; use --distributed.comm=auto (nccl for cuda) or "
                      "--policy.device=cpu");
}

}  // namespace shardkit::train
