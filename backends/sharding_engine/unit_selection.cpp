// Wrap-unit selection: classes, size-based wrapping, ignored modules, tied parameters.
#include "unit_selection.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "shardkit/error.hpp"

namespace shardkit::shard {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out.empty() ? "none" : out;
}

bool under(const std::string& name, const std::string& module) {
  return module.empty() || (name.size() > module.size() && name.compare(0, module.size(), module) == 0 &&
                            name[module.size()] == '.');
}

// The policy's parameters, tied ones merged (first name first), in registration order.
std::vector<NamedParam> distinct_parameters(Policy& policy) {
  std::vector<NamedParam> params;
  std::map<const void*, std::size_t> seen;
  for (const auto& item : policy.named_parameters()) {
    const void* impl = item.value().unsafeGetTensorImpl();
    if (auto it = seen.find(impl); it != seen.end()) {
      params[it->second].first.push_back(item.key());
      continue;
    }
    seen[impl] = params.size();
    params.push_back({{item.key()}, item.value()});
  }
  return params;
}

// Splits off the parameters that stay whole: under an ignored module, or small enough.
std::vector<NamedParam> take_whole(Policy& policy, const ShardingOptions& o, std::vector<NamedParam>& params) {
  std::vector<std::string> ignored;
  if (!o.ignored_modules.empty()) {
    std::regex pattern;
    try {
      pattern = std::regex(o.ignored_modules, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw ConfigError(o.option_prefix + "ignored_modules='" + o.ignored_modules +
                        "' is not a valid regular expression (" + e.what() + ")");
    }
    for (const auto& item : policy.named_modules("", /*include_self=*/false))
      if (std::regex_search(item.key(), pattern)) ignored.push_back(item.key());
    if (ignored.empty())
      throw ConfigError(o.option_prefix + "ignored_modules='" + o.ignored_modules +
                        "' matches no module of the policy; module names look like '" +
                        (policy.named_modules("", false).is_empty() ? std::string("(none)")
                                                                    : policy.named_modules("", false).keys().front()) +
                        "'");
  }
  std::vector<NamedParam> whole, rest;
  for (auto& p : params) {
    const bool is_ignored = std::any_of(ignored.begin(), ignored.end(), [&](const std::string& m) {
      return std::any_of(p.first.begin(), p.first.end(), [&](const std::string& n) { return under(n, m); });
    });
    const bool small = o.persistence_threshold > 0 && p.second.numel() <= o.persistence_threshold;
    (is_ignored || small ? whole : rest).push_back(std::move(p));
  }
  params = std::move(rest);
  return whole;
}

std::int64_t numel_of(torch::nn::Module& module) {
  std::int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

std::vector<nn::NamedBlock> wrap_blocks(Policy& policy, const ShardingOptions& o) {
  const auto all = nn::find_blocks(policy);
  std::vector<std::string> known;
  for (const auto& b : all)
    if (std::find(known.begin(), known.end(), b.block->name()) == known.end()) known.push_back(b.block->name());
  std::vector<std::string> classes = o.wrap_classes;
  std::string source = o.option_prefix + "wrap_modules";
  if (classes.empty() && o.min_num_params <= 0) {
    classes = policy.wrap_modules();
    source = "the policy's wrap_modules()";
  }
  std::vector<nn::NamedBlock> chosen;
  if (!classes.empty()) {
    for (const auto& cls : classes)
      if (std::find(known.begin(), known.end(), cls) == known.end())
        throw ConfigError(source + " names '" + cls + "', but no block of the policy has that class; its blocks are: " +
                          join(known) + " (wrap units must be shardkit::nn::Block modules)");
    chosen = nn::find_blocks(policy, classes);
  } else if (o.min_num_params > 0) {
    for (const auto& b : all)
      if (numel_of(*b.block) >= o.min_num_params) chosen.push_back(b);
  }
  const auto outer = nn::outermost_blocks(chosen);
  if (outer.empty()) {
    if (o.min_num_params > 0 && o.wrap_classes.empty())
      throw ConfigError("backend " + o.backend + " found no wrap units: no block has at least " + o.option_prefix +
                        "min_num_params=" + std::to_string(o.min_num_params) + " parameters (blocks: " + join(known) +
                        "); lower it or name the classes with " + o.option_prefix + "wrap_modules='[\"Cls\"]'");
    throw ConfigError("backend " + o.backend +
                      " found no wrap units: the policy declares none in wrap_modules() and neither " +
                      o.option_prefix + "wrap_modules='[\"Cls\"]' nor " + o.option_prefix +
                      "min_num_params=N is set (the policy's blocks: " + join(known) +
                      "); a sharded backend needs the repeated blocks a model is built of");
  }
  return outer;
}

}  // namespace

UnitSelection select_wrap_units(Policy& policy, const ShardingOptions& o) {
  auto params = distinct_parameters(policy);
  UnitSelection selection;
  selection.whole = take_whole(policy, o, params);
  const auto blocks = wrap_blocks(policy, o);
  std::vector<UnitSpec> units(blocks.size());
  UnitSpec root{"root", nullptr, {}};
  for (std::size_t i = 0; i < blocks.size(); ++i) units[i] = {blocks[i].name, blocks[i].block.get(), {}};
  for (auto& p : params) {
    std::set<std::size_t> homes;  // unit index per name (blocks.size() = root)
    for (const auto& n : p.first) {
      std::size_t home = blocks.size();
      for (std::size_t i = 0; i < blocks.size(); ++i)
        if (under(n, blocks[i].name)) home = i;
      homes.insert(home);
    }
    if (homes.size() > 1) {
      const auto unit_name = [&](std::size_t i) { return i == blocks.size() ? std::string("root") : blocks[i].name; };
      throw ConfigError("parameter '" + p.first.front() + "' is tied to '" + p.first.back() +
                        "', but they sit in different wrap units (" + unit_name(*homes.begin()) + " and " +
                        unit_name(*homes.rbegin()) + "); backend " + o.backend +
                        " cannot shard one tensor in two units: put both uses in one unit or untie them");
    }
    (*homes.begin() == blocks.size() ? root : units[*homes.begin()]).params.push_back(std::move(p));
  }
  for (auto& u : units)
    if (!u.params.empty()) selection.units.push_back(std::move(u));
  if (!root.params.empty()) selection.units.push_back(std::move(root));
  return selection;
}

std::int64_t auto_bucket_numel(std::int64_t numel, bool reduce_scatter) {
  constexpr std::int64_t kDeepSpeedDefault = 500'000'000;
  if (!reduce_scatter) return kDeepSpeedDefault;
  return std::max<std::int64_t>(1, std::min(kDeepSpeedDefault, (numel + 7) / 8));
}

UnitSelection select_gradient_buckets(Policy& policy, const ShardingOptions& o) {
  auto params = distinct_parameters(policy);
  UnitSelection selection;
  selection.whole = take_whole(policy, o, params);
  std::reverse(params.begin(), params.end());
  std::int64_t total = 0;
  for (const auto& p : params) total += p.second.numel();
  const auto cap = o.bucket_numel > 0 ? o.bucket_numel : auto_bucket_numel(total, o.reduce_scatter);
  UnitSpec bucket;
  std::int64_t filled = 0;
  const auto close = [&] {
    if (bucket.params.empty()) return;
    bucket.name = "bucket" + std::to_string(selection.units.size());
    selection.units.push_back(std::move(bucket));
    bucket = UnitSpec{};
    filled = 0;
  };
  for (auto& p : params) {
    if (filled > 0 && filled + p.second.numel() > cap) close();
    filled += p.second.numel();
    bucket.params.push_back(std::move(p));
  }
  close();
  return selection;
}

}  // namespace shardkit::shard
