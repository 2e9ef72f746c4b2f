// The Checkpointer: one home for writing and reading a run's checkpoints (format plugins,
// staging, crash-safe publication, format detection).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "shardkit/checkpoint_format.hpp"
#include "shardkit/comm.hpp"
#include "shardkit/config.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/runtime.hpp"
#include "shardkit/sharded_state.hpp"

namespace shardkit::train {

/// Saves a run's checkpoints in the selected format and loads them in whichever format they
/// were saved in. Every rank of `world` makes the same calls in the same order.
class Checkpointer {
 public:
  /// `config` gives the formats their options (checkpoint.<name>.*).
  Checkpointer(const Registry& registry, const Config& config, const Runtime& runtime, CommGroup& world,
               std::string format);

  /// The format checkpoint folder `dir` was saved in, detected from its files: the selected
  /// one when it holds the model there, else the first other format that does (a run may
  /// swap --checkpoint_format between save and resume). nullptr when none.
  std::shared_ptr<CheckpointFormat> format_of(const std::string& dir) const;
  /// "dcp, safetensors": the formats found, for messages.
  std::string formats_known() const;
  /// Fills every chunk of `wanted` from checkpoint folder `dir`, saved in `format`.
  void load(ShardedState& wanted, const std::string& dir, CheckpointFormat& format) const;

  /// Writes checkpoint `<root>/<name>`: staged in `<root>/.tmp-<name>` (with pretrained_model/,
  /// training_state/ and, for "ema." entries, pretrained_model_ema/), every rank writes `state`
  /// through the format and `rng_state` (current_rng_state() at the step saved), rank 0 then
  /// writes `files` (path relative to the checkpoint -> contents) and publishes the folder and
  /// the `last` link. Returns the checkpoint's folder.
  std::string save(const std::string& root, const std::string& name, const ShardedState& state,
                   const std::map<std::string, std::string>& files, const at::Tensor& rng_state) const;

 private:
  std::shared_ptr<CheckpointFormat> create(const std::string& name) const;

  const Registry& registry_;
  const Config& config_;
  const Runtime& runtime_;
  CommGroup& world_;
  std::string name_;
  std::shared_ptr<CheckpointFormat> format_;
};

}  // namespace shardkit::train
