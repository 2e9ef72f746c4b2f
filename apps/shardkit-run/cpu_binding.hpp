// --cpu-bind=cores: each local rank pinned to its own share of the CPUs the launcher may use.
#pragma once

#include <string>
#include <vector>

namespace shardkit::run {

/// The CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> allowed_cpus();

/// `cpus` cut into `ranks` contiguous blocks whose sizes differ by at most one, in order. With
/// fewer CPUs than ranks, rank r gets CPU cpus[r % cpus.size()] (ranks share CPUs).
std::vector<std::vector<int>> split_cpus(const std::vector<int>& cpus, int ranks);

/// "0-3,8" for {0, 1, 2, 3, 8}: the kernel's list format (Cpus_allowed_list, taskset -c).
std::string cpu_list_text(const std::vector<int>& cpus);

/// --cpu-bind=cores: split_cpus of allowed_cpus() for `ranks` local ranks. Throws
/// shardkit::RuntimeError when this process's CPUs cannot be read.
std::vector<std::vector<int>> cpu_bind_shares(int ranks);

}  // namespace shardkit::run
