// Splits command-line arguments into dotted `--key=value` flags.
#include <cctype>
#include <string>
#include <vector>

#include "shardkit/config.hpp"
#include "shardkit/error.hpp"

namespace shardkit {
namespace {

// A key is dot-separated words of letters, digits, '_' and '-', each starting with a
// letter, digit or '_' (so "---x" and "--a..b" are refused rather than guessed at).
bool valid_key(const std::string& key) {
  if (key.empty()) return false;
  bool word_start = true;
  for (char c : key) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '.') {
      if (word_start) return false;
      word_start = true;
      continue;
    }
    if (!(std::isalnum(u) || c == '_' || (c == '-' && !word_start))) return false;
    word_start = false;
  }
  return !word_start;
}

[[noreturn]] void malformed(const std::string& arg, const std::string& why) {
  throw ConfigError("malformed argument '" + arg + "': " + why +
                    "; options are written --key=value or --key value (e.g. --steps=100 or --output_dir out)");
}

/// Whether `arg` can be the value of the flag before it (`--steps 10`, as argparse and
/// draccus accept): anything but an option, a negative number included.
bool is_separate_value(const std::string& arg) {
  if (arg.rfind("--", 0) == 0) return false;
  if (arg.size() > 1 && arg[0] == '-') return std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.';
  return true;
}

}  // namespace

RawConfig parse_flags(const std::vector<std::string>& args) {
  RawConfig flags;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& arg = args[i];
    if (arg.rfind("--", 0) != 0) {
      if (arg.size() > 1 && arg[0] == '-') {
        malformed(arg, "single-dash options are not supported");
      }
      if (arg.find('=') != std::string::npos) {
        malformed(arg, "missing the leading '--' (write --" + arg + ")");
      }
      malformed(arg, "positional arguments are not accepted");
    }
    const std::size_t eq = arg.find('=');
    std::string key = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (!valid_key(key)) {
      malformed(arg, "'" + key + "' is not a valid option name");
    }
    // --key=value, --key value, or a bare --key (true).
    std::string value = eq != std::string::npos                                 ? arg.substr(eq + 1)
                        : i + 1 < args.size() && is_separate_value(args[i + 1]) ? args[++i]
                                                                                : "true";
    // A repeated flag: the last one wins, as with most command-line tools.
    flags[key] = RawValue{Value{std::move(value)}, "--" + key};
  }
  return flags;
}

}  // namespace shardkit
