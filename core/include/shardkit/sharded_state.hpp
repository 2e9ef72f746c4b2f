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

/// Which ranks hold identical copies of a piece of state, and which copy this rank holds: a
/// ddp parameter is copied on every rank of the data-parallel group, an HSDP shard on the
/// ranks of its replica group, a plain shard only here. Saving writes copy 0 once. There is no
/// default: whoever produces state says how it is replicated.
///
///   Replicas::among(group.rank(), group.size())   // every rank of `group` holds the same
///   Replicas::none()                              // only this rank holds it
class Replicas {
 public:
  /// This rank alone holds the data (a shard, or the state of a single process).
  static Replicas none() { return Replicas(0, 1); }
  /// `count` ranks hold identical copies and this rank holds copy `index`; throws
  /// RuntimeError unless 0 <= index < count.
  static Replicas among(int index, int count);
  /// This rank's copy (0 .. count() - 1).
  int index() const { return index_; }
  /// How many ranks hold a copy.
  int count() const { return count_; }
  /// Whether this rank's copy is the one a save writes (copy 0).
  bool saved_here() const { return index_ == 0; }
  bool operator==(const Replicas&) const = default;

 private:
  Replicas(int index, int count) : index_(index), count_(count) {}
  int index_;
  int count_;
};

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
  /// Rows [first, first + count) of dim 0 of a tensor of `shape` (a 0-dim tensor counts as
  /// one row); no chunk when count is 0. FSDP-style dim-0 sharding.
  static ShardLayout rows(const std::vector<std::int64_t>& shape, std::int64_t first, std::int64_t count);
  /// Elements [begin, end) of the row-major flattening of a tensor of `shape`, as the fewest
  /// boxes (at most 2 per dimension), local offsets from 0. ZeRO-style flat partitioning.
  static ShardLayout flat_range(const std::vector<std::int64_t>& shape, std::int64_t begin, std::int64_t end);
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
  Replicas replicas;                ///< who holds the same boxes; copy 0 is saved
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
  /// True when the "model." entries are a PEFT adapter (a LoRA run): whole-tensor formats
  /// then keep them in pretrained_model/adapter_model.safetensors under PEFT's names
  /// ("base_model.model.<name>") instead of model.safetensors. Default false.
  bool model_is_adapter = false;

  /// Adds `local` under `key`, cut into views along `layout` (no copies: loading into
  /// the views writes straight into `local`).
  void add(const std::string& key, const at::Tensor& local, const ShardLayout& layout,
           Replicas replicas);
  /// Entries whose key starts with `prefix`.
  std::vector<std::string> keys_with_prefix(const std::string& prefix) const;
};

}  // namespace shardkit
