// LeRobot main's guard against accelerate's environment variables that would configure a run
// behind its command line (sharding, parallelism, gradient accumulation).
#pragma once

#include <functional>
#include <string>

namespace shardkit::train {

/// Looks up an environment variable: nullptr when it is not set.
using EnvLookup = std::function<const char*(const char* name)>;

/// The message that names every accelerate-configuring variable that is set (any value counts, as
/// LeRobot checks presence: ACCELERATE_USE_FSDP, ACCELERATE_USE_PARALLELISM_CONFIG,
/// ACCELERATE_GRADIENT_ACCUMULATION_STEPS) and the flag to use instead of each; "" when none is.
std::string accelerate_env_message(const EnvLookup& env);

/// Refuses (ConfigError) to start while such a variable is set, unless LEROBOT_ALLOW_ACCELERATE_ENV
/// is set to a non-empty value: then the message is returned, to be logged once as a warning, and
/// the run goes on as its command line says. Returns "" when nothing is set.
std::string check_accelerate_env(const EnvLookup& env);

}  // namespace shardkit::train
