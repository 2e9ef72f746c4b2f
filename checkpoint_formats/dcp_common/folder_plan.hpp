// What a rank wrote into its DCP data file, as exchanged with rank 0; key paths; dtype names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <c10/core/ScalarType.h>

#include "shardkit/dcp/metadata.hpp"

namespace shardkit::dcp {

/// One item a rank wrote: a tensor chunk (where in the global tensor) or a byte item (a
/// non-tensor value; dtype, shapes and offsets empty), and where in which file.
struct WrittenChunk {
  std::string fqn;
  std::string dtype;  ///< DCP's dtype name, "float32"
  std::vector<std::int64_t> global_shape;
  std::vector<std::int64_t> offsets;
  std::vector<std::int64_t> sizes;
  int rank = 0;                  ///< writer: the file is data_file_name(rank)
  std::int64_t file_offset = 0;  ///< first byte of the torch.save blob
  std::int64_t length = 0;       ///< bytes of the blob
  bool bytes = false;            ///< a byte item (BytesStorageMetadata), not a tensor chunk
};

/// A rank's write results as text for the gather, and back. decode_written throws
/// FormatError on text that encode_written did not produce.
std::string encode_written(const std::vector<WrittenChunk>& chunks);
std::vector<WrittenChunk> decode_written(const std::string& text);

/// The path of a flattened key in the nested state dict, as DCP's planner_data records
/// it: "model.a.b" -> ("model", "a.b"); "optimizer.state.a.b.exp_avg" -> ("optimizer",
/// "state", "a.b", "exp_avg"); "optimizer.param_groups.0.lr" -> (..., 0, "lr").
std::vector<PathComponent> planner_path(const std::string& fqn);

/// DCP's name of a LibTorch dtype ("float32", "bfloat16", "uint16"); FormatError when DCP
/// has none.
std::string dcp_dtype(c10::ScalarType dtype);

}  // namespace shardkit::dcp
