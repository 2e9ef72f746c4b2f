// Resolving a configuration with every problem at once and each value's origin; option spellings.
//
// resolve() (config.hpp) throws at the first call with all its own problems; a program that also
// checks values against each other (shardkit-train) uses resolve_all(), adds its problems and
// throws them together with throw_config_errors().
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "shardkit/config.hpp"

namespace shardkit {

/// `key` with every '-' read as '_' (`save-freq` is `save_freq`, as argparse and draccus
/// accept both spellings). Declared option names use '_'.
std::string canonical_key(const std::string& key);

/// The same values under canonical keys, each keeping its origin (so messages show what was
/// typed). Two spellings of one option in `raw` (`--save-freq` and `--save_freq`) are a
/// ConfigError naming both, their values and where each came from.
RawConfig canonical_spellings(const RawConfig& raw);

/// What resolve_all() found: every problem, and where each value came from.
struct Resolution {
  Config config;  ///< defaults, plus every given value that was valid
  /// Full key -> the origin of the value it holds (RawValue::origin: "--steps",
  /// "run.toml:3:7", ...), or "default". Keys without a value (no default) are absent.
  std::map<std::string, std::string> origins;
  std::vector<std::string> errors;  ///< one message per problem, in key order, as resolve() words them
  std::set<std::string> refused;    ///< options whose given value was refused (they hold the default)
};

/// As resolve(), but returns the problems instead of throwing them, so that checks across
/// options can add theirs and the user sees everything at once.
Resolution resolve_all(const Schema& schema, const RawConfig& file, const RawConfig& flags);

/// Throws `errors` as one ConfigError: the message itself when there is one, else
/// "N configuration errors:" and one indented line each. Does nothing when empty.
void throw_config_errors(const std::vector<std::string>& errors);

/// Up to `limit` of `known` close enough to `word` to be a typo of it, closest first ("did you
/// mean"): within a third of its length in edits (2 to 4; 1 for words of up to 3 characters),
/// a swap of two neighbours counting as one edit. A word that is the last dotted part of a
/// known key ("lr" for "optimizer.lr") counts as close.
std::vector<std::string> closest_names(const std::string& word, const std::vector<std::string>& known,
                                       std::size_t limit = 3);

}  // namespace shardkit
