// --cpu-bind=cores (see cpu_binding.hpp).
#include "cpu_binding.hpp"

#include <sched.h>

#include <algorithm>

#include "shardkit/error.hpp"

namespace shardkit::run {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

std::vector<std::vector<int>> split_cpus(const std::vector<int>& cpus, int ranks) {
  std::vector<std::vector<int>> shares(static_cast<std::size_t>(std::max(ranks, 0)));
  if (cpus.empty() || ranks < 1) return shares;
  const auto n = static_cast<int>(cpus.size());
  if (n < ranks) {
    for (int r = 0; r < ranks; ++r) shares[static_cast<std::size_t>(r)] = {cpus[static_cast<std::size_t>(r % n)]};
    return shares;
  }
  int next = 0;
  for (int r = 0; r < ranks; ++r) {
    const int size = n / ranks + (r < n % ranks ? 1 : 0);
    shares[static_cast<std::size_t>(r)].assign(cpus.begin() + next, cpus.begin() + next + size);
    next += size;
  }
  return shares;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string text;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += std::to_string(cpus[i]);
    if (j > i) text += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return text;
}

std::vector<std::vector<int>> cpu_bind_shares(int ranks) {
  const auto cpus = allowed_cpus();
  if (cpus.empty())
    throw RuntimeError("--cpu-bind=cores: cannot read the CPUs this process may run on (sched_getaffinity failed); "
                       "run without --cpu-bind");
  return split_cpus(cpus, ranks);
}

}  // namespace shardkit::run
