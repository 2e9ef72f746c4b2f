// Helpers shared by the configuration sources in this folder; not part of the SDK.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shardkit/config.hpp"

namespace shardkit::config_detail {

/// Parses a JSON document whose top level is an object into dotted keys. `name` is
/// used in error messages ("name:line:col: ...") and as the origin of every value.
RawConfig parse_json_document(const std::string& text, const std::string& name);
/// A YAML document (a mapping, nested mappings becoming dotted keys) as raw values, each
/// with its file:line:column; all problems in one ConfigError.
RawConfig parse_yaml_document(const std::string& text, const std::string& path);
/// A TOML document (tables becoming dotted keys; arrays of strings only) as raw values, each
/// with its file:line:column; all problems in one ConfigError.
RawConfig parse_toml_document(const std::string& text, const std::string& path);

/// Throws one ConfigError holding every message of `errors`, one per line; nothing when empty.
void throw_if_any(const std::vector<std::string>& errors);

/// Converts `raw` to the type of `entry` and checks its range and choices. On failure
/// returns nothing and sets `problem` to what is allowed ("expected an integer").
std::optional<Value> convert_option(const SchemaEntry& entry, const Value& raw,
                                    std::string& problem);

/// A range bound as --help and range errors show it: the shortest text that reads back exactly.
std::string format_bound(double bound);

/// "command line" for a flag's origin ("--key"), else the origin itself.
std::string describe_origin(const std::string& origin);

/// Line and column (both from 1) of byte `offset` in `text`.
std::pair<std::size_t, std::size_t> line_column(const std::string& text, std::size_t offset);

}  // namespace shardkit::config_detail
