// The checkpoint format interface: saves and loads a ShardedState's tensors inside a checkpoint folder.
#pragma once

#include <string>

#include "shardkit/plugin.hpp"
#include "shardkit/comm.hpp"
#include "shardkit/sharded_state.hpp"

namespace shardkit {

/// A checkpoint format plugin's object. Core writes the JSON files, RNG state and the
/// folder structure; the format writes the tensors of "model." entries under
/// `<dir>/pretrained_model/` and of "optimizer." entries under `<dir>/training_state/`.
class CheckpointFormat : public Plugin {
 public:
  ~CheckpointFormat() override;
  /// Writes `state` into checkpoint folder `dir` (which exists, with its two subfolders).
  /// Every rank of `group` calls it (nullptr: this process saves alone); entries replicated
  /// across ranks are written once (Replicas::saved_here).
  virtual void save(const ShardedState& state, const std::string& dir, CommGroup* group) = 0;
  /// Fills every chunk of `wanted` in place from checkpoint folder `dir`; every rank of
  /// `group` calls it (nullptr: alone). Throws FormatError naming the file and entry when
  /// something is missing or malformed.
  virtual void load(ShardedState& wanted, const std::string& dir, CommGroup* group) = 0;
  /// Whether `dir` holds model weights in this format (used to say what went wrong).
  virtual bool has_model(const std::string& dir) const = 0;
};

}  // namespace shardkit
