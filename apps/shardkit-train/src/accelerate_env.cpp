// LeRobot main's accelerate environment guard (lerobot/distributed/factory.py), with a flag per variable.
#include "accelerate_env.hpp"

#include "shardkit/error.hpp"

namespace shardkit::train {
namespace {

constexpr const char* kAllow = "LEROBOT_ALLOW_ACCELERATE_ENV";

struct Guarded {
  const char* variable;
  const char* instead;  ///< what says the same on shardkit-train's command line
};

// Sorted by name, as LeRobot lists them. `accelerate launch` sets none of them unless asked
// (--use_fsdp, --use_parallelism_config, DeepSpeed), so a plain launch passes.
constexpr Guarded kGuarded[] = {
    {"ACCELERATE_GRADIENT_ACCUMULATION_STEPS", "--accelerator.gradient_accumulation.steps=N"},
    {"ACCELERATE_USE_FSDP", "--parallelism.dp_shard=N (with --distributed_backend=fsdp, the default for a sharded mesh)"},
    {"ACCELERATE_USE_PARALLELISM_CONFIG", "--parallelism.dp_replicate=R and --parallelism.dp_shard=S"},
};

}  // namespace

std::string accelerate_env_message(const EnvLookup& env) {
  std::string set, instead;
  for (const auto& guarded : kGuarded) {
    const char* value = env(guarded.variable);
    if (!value) continue;
    set += (set.empty() ? "" : ", ") + std::string(guarded.variable) + "=" + value;
    instead += std::string(instead.empty() ? "" : "; ") + "instead of " + guarded.variable + " use " + guarded.instead;
  }
  if (set.empty()) return "";
  return "accelerate-configuring environment variables are set: " + set +
         ". shardkit-train, like lerobot-train, takes its parallelism and accumulation from its own options "
         "only: " + instead + ". Unset the variables (a plain `accelerate launch` or torchrun sets none of them; "
         "`accelerate launch --config_file` with FSDP or DeepSpeed does), or set " + kAllow +
         "=1 to go on with the command line's values";
}

std::string check_accelerate_env(const EnvLookup& env) {
  auto message = accelerate_env_message(env);
  if (message.empty()) return "";
  const char* allow = env(kAllow);
  if (!allow || !*allow) throw ConfigError(message);
  return message + " (" + kAllow + "=" + allow + ": going on; these variables change nothing in shardkit-train)";
}

}  // namespace shardkit::train
