// wrap_modules() checked against the policy's module classes before training starts.
#pragma once

#include <string>

#include "shardkit/policy.hpp"

namespace shardkit::train {

/// "" when every class wrap_modules() names is the class of some module of `policy`,
/// else a message naming the missing classes and the classes the policy has.
std::string wrap_modules_problem(const Policy& policy, const std::string& policy_name);

}  // namespace shardkit::train
