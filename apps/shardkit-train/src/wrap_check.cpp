// wrap_modules() checked against the policy's module classes before training starts.
#include "wrap_check.hpp"

#include <set>

namespace shardkit::train {

std::string wrap_modules_problem(const Policy& policy, const std::string& policy_name) {
  std::set<std::string> known;
  for (const auto& module : policy.modules(/*include_self=*/false)) known.insert(module->name());
  std::string missing;
  for (const auto& wanted : policy.wrap_modules())
    if (!known.count(wanted)) missing += (missing.empty() ? "'" : ", '") + wanted + "'";
  if (missing.empty()) return "";
  std::string classes;
  for (const auto& name : known) classes += (classes.empty() ? "" : ", ") + name;
  return "policy '" + policy_name + "': wrap_modules() names " + missing + ", but no module of the policy "
         "has that class (its classes: " + (classes.empty() ? "none" : classes) +
         "); fix wrap_modules() in the policy plugin, or a sharded backend will have no wrap units";
}

}  // namespace shardkit::train
