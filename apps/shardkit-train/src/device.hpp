// Choosing the torch device a rank computes on, and refusing a transport that cannot move its tensors.
#pragma once

#include <string>

namespace shardkit::train {

/// The device for --policy.device=`requested` on the process with `local_rank`: "cpu";
/// "cuda" -> "cuda:<local_rank>" of the visible devices (CUDA_VISIBLE_DEVICES applies);
/// "cuda:N" as given. A CUDA device loads LibTorch's CUDA libraries first. Throws
/// ConfigError naming what is missing (a CPU-only LibTorch, no visible GPU, too few).
std::string resolve_device(const std::string& requested, int local_rank);

/// Throws ConfigError when --distributed.comm=`comm` cannot move tensors on `device`
/// (nccl on a CPU device, gloo on a CUDA device), before any rank joins the run.
void check_comm_device(const std::string& comm, const std::string& device);

}  // namespace shardkit::train
