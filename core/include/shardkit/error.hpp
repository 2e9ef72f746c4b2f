// The one exception hierarchy of shardkit: every error a user can see is one of these.
#pragma once

#include <stdexcept>
#include <string>

namespace shardkit {

/// Base of every shardkit error. The message names what was wrong (flag, file, rank,
/// parameter) and, where there is one, what would fix it.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
  ~Error() override;
};

/// A command-line flag or configuration file value is missing, unknown or invalid.
class ConfigError : public Error {
 public:
  using Error::Error;
  ~ConfigError() override;
};

/// A plugin library could not be loaded or was refused by the loader's checks.
class PluginError : public Error {
 public:
  using Error::Error;
  ~PluginError() override;
};

/// A file (checkpoint, safetensors, config) is missing, truncated or malformed.
class FormatError : public Error {
 public:
  using Error::Error;
  ~FormatError() override;
};

/// A failure while training (diverged loss, missing gradient, peer failure).
class RuntimeError : public Error {
 public:
  using Error::Error;
  ~RuntimeError() override;
};

}  // namespace shardkit
