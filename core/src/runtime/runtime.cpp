// Reading the process's rank and world size from torchrun-style environment variables.
#include "shardkit/runtime.hpp"

#include <cstdlib>
#include <string>

#include "shardkit/error.hpp"

namespace shardkit {
namespace {

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > 1'000'000)
    throw ConfigError(std::string("environment variable ") + name + "=" + text +
                      " is not a non-negative integer");
  return static_cast<int>(value);
}

}  // namespace

Runtime Runtime::from_environment() {
  Runtime rt;
  rt.world_size = env_int("WORLD_SIZE", 1);
  rt.rank = env_int("RANK", 0);
  rt.local_rank = env_int("LOCAL_RANK", rt.rank);
  rt.local_world_size = env_int("LOCAL_WORLD_SIZE", rt.world_size);
  if (rt.world_size < 1) throw ConfigError("WORLD_SIZE must be at least 1");
  if (rt.rank >= rt.world_size)
    throw ConfigError("RANK=" + std::to_string(rt.rank) + " is not below WORLD_SIZE=" +
                      std::to_string(rt.world_size));
  return rt;
}

}  // namespace shardkit
