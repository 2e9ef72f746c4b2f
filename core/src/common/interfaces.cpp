// Out-of-line destructors and defaults of the plugin interfaces (anchors their type_info in core).
#include "shardkit/backend.hpp"
#include "shardkit/checkpoint_format.hpp"
#include "shardkit/dataset.hpp"
#include "shardkit/policy.hpp"

namespace shardkit {

Policy::~Policy() = default;
Dataset::~Dataset() = default;
Backend::~Backend() = default;
CheckpointFormat::~CheckpointFormat() = default;

}  // namespace shardkit
