// The sharded state: what checkpoint formats save and load, whatever the backend's layout.
//
// Entries are keyed "model.<parameter name>" and "optimizer.state.<parameter name>.<slot>"
// (as accelerate's DCP nests them). Each entry has its global shape and dtype and the
// N-D boxes this rank holds; a single process holds one box covering the whole tensor.
// Loading fills the boxes the current topology wants from whatever boxes were saved.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include <ATen/Tensor.h>

namespace shardkit {

/// An N-D box of a global tensor: where it starts and how big it is in each dimension.
struct Box {
  std::vector<std::int64_t> offsets;
  std::vector<std::int64_t> sizes;
  /// Number of elements in the box.
  std::int64_t numel() const;
  bool operator==(const Box& other) const {
    return offsets == other.offsets && sizes == other.sizes;
  }
};

/// A box covering all of a tensor of `shape`.
Box full_box(const std::vector<std::int64_t>& shape);
/// The intersection of two boxes in `out`; false when they share no element (an empty box
/// shares none, and boxes of different rank are disjoint). Symmetric in `a` and `b`.
bool intersect(const Box& a, const Box& b, Box& out);

/// How a rank's local tensor maps onto the global tensor: each chunk is a contiguous
/// range of the local tensor's flattened elements holding one box in row-major order.
/// Dim-0 sharding gives one chunk; a flat ZeRO range gives several.
struct ShardLayout {
  struct Chunk {
    Box box;
    std::int64_t local_offset = 0;  ///< first element in the flattened local tensor
  };
  std::vector<std::int64_t> global_shape;
  std::vector<Chunk> chunks;

  /// The layout of an unsharded tensor of `shape`.
  static ShardLayout whole(const std::vector<std::int64_t>& shape);
};

/// One box of data.
struct TensorChunk {
  Box box;
  at::Tensor data;  ///< shape == box.sizes
};

/// One named tensor of the state.
struct StateEntry {
  std::vector<std::int64_t> global_shape;
  at::ScalarType dtype = at::kFloat;
  std::vector<TensorChunk> chunks;  ///< the boxes this rank holds
  bool replicated = false;          ///< every rank holds the same data: write it once
};

/// A non-tensor value of the state, as Python holds it: None, bool, int, float, str, a tuple
/// of floats (AdamW's betas) or a list of str (a param group's parameter names).
using ObjectValue = std::variant<std::monostate, bool, std::int64_t, double, std::string,
                                 std::vector<double>, std::vector<std::string>>;

/// The whole state of a run as formats see it.
struct ShardedState {
  std::map<std::string, StateEntry> tensors;
  /// Non-tensor entries, every rank holding the same values: "optimizer.param_groups.<group
  /// index>.<field>", as accelerate's DCP save flattens an optimizer's param groups. Formats
  /// that keep param groups elsewhere (safetensors: a JSON file) ignore them.
  std::map<std::string, ObjectValue> objects;

  /// Adds `local` under `key`, cut into views along `layout` (no copies: loading into
  /// the views writes straight into `local`).
  void add(const std::string& key, const at::Tensor& local, const ShardLayout& layout,
           bool replicated = false);
  /// Entries whose key starts with `prefix`.
  std::vector<std::string> keys_with_prefix(const std::string& prefix) const;
};

}  // namespace shardkit
