// Counting CPUs and visible CUDA devices for --nproc-per-node (CUDA is loaded only when asked).
#include "local_devices.hpp"

#include <unistd.h>

#include <cstdlib>

#include "shardkit/error.hpp"
#include "shardkit/torch_build.hpp"

namespace shardkit::run {
namespace {

/// Online CPUs, as Python's os.cpu_count() (which torchrun uses) counts them: the
/// machine's, not this process's affinity mask.
int cpu_count() {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

/// Visible CUDA devices (0 when this LibTorch has no CUDA or the driver sees none); `why`
/// says which.
int cuda_device_count(std::string& why) {
  if (!load_cuda(&why)) return 0;
  const int count = torch_build().cuda_devices;
  if (count == 0) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    why = std::string("no CUDA device is visible") +
          (visible ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : "");
  }
  return count;
}

std::string plural(int count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

}  // namespace

DerivedCount count_from_machine(const std::string& value) {
  if (value == "cpu") return {cpu_count(), plural(cpu_count(), "CPU")};
  if (value == "gpu" || value == "auto") {
    std::string why;
    const int gpus = cuda_device_count(why);
    if (gpus > 0) return {gpus, plural(gpus, "GPU")};
    if (value == "gpu")
      throw ConfigError("--nproc-per-node=gpu: CUDA is not available: " + why +
                        "; give a number, or use --nproc-per-node=cpu or auto");
    return {cpu_count(), plural(cpu_count(), "CPU") + ", no CUDA device"};
  }
  throw ConfigError("--nproc-per-node=" + value +
                    ": expected a whole number, auto (one per GPU, else one per CPU), cpu or gpu");
}

}  // namespace shardkit::run
