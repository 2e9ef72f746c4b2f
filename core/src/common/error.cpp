// Out-of-line destructors: they anchor the vtables and type_info of the SDK's base classes in core.
#include "shardkit/error.hpp"
#include "shardkit/plugin.hpp"

namespace shardkit {

Error::~Error() = default;
ConfigError::~ConfigError() = default;
PluginError::~PluginError() = default;
FormatError::~FormatError() = default;
RuntimeError::~RuntimeError() = default;
Plugin::~Plugin() = default;

void* Plugin::find_capability(std::string_view, std::uint32_t) { return nullptr; }

}  // namespace shardkit
