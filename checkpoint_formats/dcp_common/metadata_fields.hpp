// The field list of DCP's Metadata class, which leads to those of all the classes it holds.
#pragma once

#include "dataclass_codec.hpp"
#include "shardkit/dcp/metadata.hpp"

namespace shardkit::dcp::detail {

// torch.distributed.checkpoint.metadata.Metadata (metadata_fields.cpp).
const Dataclass<Metadata>& metadata_class();

}  // namespace shardkit::dcp::detail
