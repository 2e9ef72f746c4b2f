// Option schemas: how core and plugins declare the options they accept.
#pragma once

#include <cstdint>

namespace shardkit {

/// The type of one option's value.
enum class OptionType : std::uint32_t { Bool = 0, Int = 1, Float = 2, String = 3 };

/// One declared option. A plain struct so that a plugin can declare its options as a
/// static array that crosses the library boundary without constructors:
///
///   static const shardkit::OptionSpec kOptions[] = {
///       {"hidden_dim", shardkit::OptionType::Int, "256", "Width of each block", "1", nullptr, nullptr},
///       {"activation", shardkit::OptionType::String, "gelu", "Non-linearity", nullptr, nullptr, "gelu|relu"},
///   };
///
/// `name` is relative to the plugin's namespace (policy options are given as
/// `--policy.<name>`, dataset options as `--dataset.<name>`, backend options as
/// `--accelerator.<backend>.<name>`, checkpoint format options as
/// `--checkpoint.<format>.<name>`).
struct OptionSpec {
  const char* name;           ///< option name, dotted for nested groups
  OptionType type;            ///< value type
  const char* default_value;  ///< default, written as on the command line
  const char* help;           ///< one line for --help
  const char* min;            ///< inclusive lower bound for Int/Float; nullptr = none
  const char* max;            ///< inclusive upper bound for Int/Float; nullptr = none
  const char* choices;        ///< "a|b|c" for String options with a fixed set; nullptr = any
};

}  // namespace shardkit
