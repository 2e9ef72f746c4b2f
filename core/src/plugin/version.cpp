// shardkit::version(): the project version recorded when the core library was built.
#include "shardkit/version.hpp"

namespace shardkit {

const char* version() { return SHARDKIT_VERSION; }

}  // namespace shardkit
