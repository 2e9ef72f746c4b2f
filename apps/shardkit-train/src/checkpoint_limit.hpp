// --save_total_limit: the newest K checkpoints of a run kept, older ones removed once a newer one
// is published (the Hugging Face Trainer's and AITraining's save_total_limit; torchtitan's
// keep_latest_k).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardkit::train {

/// Entries of `checkpoints_dir` shardkit did not write: anything but step folders (digits),
/// `last`, and what an interrupted save leaves (.tmp-*, .old-*, .last.tmp).
std::vector<std::string> foreign_checkpoint_entries(const std::string& checkpoints_dir);

/// Removes the step folders of `checkpoints_dir` older than its `keep` newest (by step number),
/// never the one `last` points to; returns the names removed. Call on one rank, after a publish.
std::vector<std::string> remove_old_checkpoints(const std::string& checkpoints_dir, std::int64_t keep);

}  // namespace shardkit::train
