// Reading the process's rank, world size and rendezvous address from torchrun, Slurm or Open MPI variables.
#include "shardkit/runtime.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

#include "shardkit/error.hpp"

namespace shardkit {
namespace {

using Lookup = const char* (*)(const char*, void*);

class Env {
 public:
  Env(Lookup lookup, void* user) : lookup_(lookup), user_(user) {}

  const char* raw(const char* name) const {
    const char* text = lookup_(name, user_);
    return text && *text ? text : nullptr;
  }
  bool has(const char* name) const { return raw(name) != nullptr; }
  std::string text(const char* name, const std::string& fallback) const {
    const char* t = raw(name);
    return t ? std::string(t) : fallback;
  }
  int integer(const char* name, int fallback) const {
    const char* t = raw(name);
    if (!t) return fallback;
    char* end = nullptr;
    const long value = std::strtol(t, &end, 10);
    if (*end != '\0' || value < 0 || value > 1'000'000)
      throw ConfigError(std::string("environment variable ") + name + "=" + t +
                        " is not a non-negative integer");
    return static_cast<int>(value);
  }

 private:
  Lookup lookup_;
  void* user_;
};

/// SLURM_NTASKS_PER_NODE may read "4" or "4(x2)" or "2,1": the first count.
int leading_count(const std::string& text, int fallback) {
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  return i == 0 ? fallback : std::stoi(text.substr(0, i));
}

void check(const Runtime& rt, const std::string& source) {
  if (rt.world_size < 1) throw ConfigError(source + ": the world size must be at least 1");
  if (rt.rank >= rt.world_size)
    throw ConfigError(source + ": rank " + std::to_string(rt.rank) +
                      " is not below the world size " + std::to_string(rt.world_size));
  if (rt.local_world_size < 1 || rt.local_rank >= rt.local_world_size)
    throw ConfigError(source + ": local rank " + std::to_string(rt.local_rank) +
                      " is not below the local world size " + std::to_string(rt.local_world_size));
  if (rt.master_port < 1 || rt.master_port > 65535)
    throw ConfigError(source + ": MASTER_PORT=" + std::to_string(rt.master_port) +
                      " is not a TCP port (1-65535)");
}

}  // namespace

std::string first_slurm_host(const std::string& nodelist) {
  // "node[03-05,9],gpu1": the first entry, with its first bracket value expanded.
  std::string first;
  int depth = 0;
  for (char c : nodelist) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) break;
    first.push_back(c);
  }
  const auto open = first.find('[');
  if (open == std::string::npos) return first;
  const auto close = first.find(']', open);
  std::string inside = first.substr(open + 1, close == std::string::npos ? std::string::npos : close - open - 1);
  const auto cut = inside.find_first_of(",-");
  if (cut != std::string::npos) inside = inside.substr(0, cut);
  const std::string tail = close == std::string::npos ? "" : first.substr(close + 1);
  return first.substr(0, open) + inside + tail;
}

Runtime Runtime::from_variables(Lookup lookup, void* user) {
  const Env env(lookup, user);
  Runtime rt;
  std::string source = "the environment";
  if (env.has("RANK") || env.has("WORLD_SIZE")) {
    if (!env.has("RANK") || !env.has("WORLD_SIZE"))
      throw ConfigError(std::string("the environment sets ") + (env.has("RANK") ? "RANK" : "WORLD_SIZE") +
                        " but not " + (env.has("RANK") ? "WORLD_SIZE" : "RANK") +
                        ": a launcher sets both (use shardkit-run or torchrun)");
    rt.launcher = "torchrun";
    source = "torchrun variables";
    rt.rank = env.integer("RANK", 0);
    rt.world_size = env.integer("WORLD_SIZE", 1);
    rt.local_rank = env.integer("LOCAL_RANK", rt.rank);
    rt.local_world_size = env.integer("LOCAL_WORLD_SIZE", rt.world_size);
    rt.node_rank = env.integer("GROUP_RANK", rt.rank / std::max(1, rt.local_world_size));
    rt.restart_count = env.integer("TORCHELASTIC_RESTART_COUNT", 0);
    const auto agent = env.text("TORCHELASTIC_USE_AGENT_STORE", "");
    rt.use_agent_store = agent == "True" || agent == "true" || agent == "1";
  } else if (env.has("SLURM_PROCID") && env.has("SLURM_NTASKS")) {
    rt.launcher = "slurm";
    source = "Slurm variables";
    rt.rank = env.integer("SLURM_PROCID", 0);
    rt.world_size = env.integer("SLURM_NTASKS", 1);
    rt.local_rank = env.integer("SLURM_LOCALID", 0);
    rt.local_world_size = leading_count(env.text("SLURM_NTASKS_PER_NODE", ""), rt.world_size);
    rt.node_rank = env.integer("SLURM_NODEID", 0);
    const auto nodes = env.text("SLURM_JOB_NODELIST", env.text("SLURM_NODELIST", ""));
    if (!nodes.empty()) rt.master_addr = first_slurm_host(nodes);
  } else if (env.has("OMPI_COMM_WORLD_RANK") && env.has("OMPI_COMM_WORLD_SIZE")) {
    rt.launcher = "openmpi";
    source = "Open MPI variables";
    rt.rank = env.integer("OMPI_COMM_WORLD_RANK", 0);
    rt.world_size = env.integer("OMPI_COMM_WORLD_SIZE", 1);
    rt.local_rank = env.integer("OMPI_COMM_WORLD_LOCAL_RANK", 0);
    rt.local_world_size = env.integer("OMPI_COMM_WORLD_LOCAL_SIZE", rt.world_size);
    rt.node_rank = env.integer("OMPI_COMM_WORLD_NODE_RANK", rt.rank / std::max(1, rt.local_world_size));
  }
  rt.master_addr = env.text("MASTER_ADDR", rt.master_addr);
  rt.master_port = env.integer("MASTER_PORT", rt.master_port);
  check(rt, source);
  return rt;
}

Runtime Runtime::from_environment() {
  return from_variables([](const char* name, void*) -> const char* { return std::getenv(name); },
                        nullptr);
}

}  // namespace shardkit
