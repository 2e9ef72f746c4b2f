// Checks across options, run after each option is valid on its own; every problem is collected.
#pragma once

#include <string>
#include <vector>

#include "config_provenance.hpp"
#include "shardkit/config_resolution.hpp"

namespace shardkit::train {

/// `--key=value` as a message should show it, with where the value came from: "(default)"
/// for a default the user never set, "(from run.toml:3:7)" for a file; nothing for a flag.
std::string describe_value(const Config& config, const Provenance& provenance, const std::string& key);

/// Appends to `errors` what is wrong across the options of `resolution` (save_freq and steps
/// multiples of the accumulation steps, a job name that is a path, --epochs with --steps),
/// skipping options whose own value was refused. The selected plugins' checks
/// (PluginDescriptor::config_check) run beside it.
void check_across_options(const Resolution& resolution, const Provenance& provenance, std::vector<std::string>& errors);

}  // namespace shardkit::train
