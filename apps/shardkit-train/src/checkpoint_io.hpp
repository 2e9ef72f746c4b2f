// The checkpoint folder: layout, the JSON files core writes, crash-safe publication, validation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/Tensor.h>

#include "data_loader.hpp"
#include "log_window.hpp"

namespace shardkit::train {

/// The contents of training_state/training_step.json.
struct TrainingStep {
  std::int64_t step = 0;
  std::int64_t dp_world_size = 1;
  std::int64_t batch_size = 0;
  std::int64_t grad_accum_steps = 1;
  std::string precision = "no";
  std::int64_t dp_replicate = 1;
  std::int64_t dp_shard = 1;
  DataPosition data;
  std::int64_t samples_seen = 0;  ///< per dp rank... summed over the cluster
  LogWindow log_window;           ///< what the next log line averages so far (absent before: empty)
};

std::string training_step_json(const TrainingStep& step);
/// Reads training_step.json; FormatError naming the file and the field on any problem.
TrainingStep read_training_step(const std::string& path);

/// "000100" for step 100 of a 1000-step run: zero-padded to max(6, digits(total_steps)).
std::string step_dir_name(std::int64_t step, std::int64_t total_steps);

/// The files every complete checkpoint has (relative to its folder), besides the format's.
const std::vector<std::string>& required_checkpoint_files();

/// "" when `dir` holds every required_checkpoint_files(); otherwise what is missing.
std::string checkpoint_files_problem(const std::string& dir);

/// Throws ConfigError when `dir` is not a complete checkpoint, naming what is missing
/// and the newest other complete checkpoint to resume from (other_checkpoint_advice).
void check_checkpoint_dir(const std::string& dir);

/// Whether `name` is a step folder's name as step_dir_name() writes it (digits only).
bool is_step_dir_name(const std::string& name);

/// Throws FormatError when the step recorded in checkpoint `dir`'s training_step.json is not
/// the step its folder name (after following `last`) says: an inconsistent checkpoint.
void check_step_matches_folder(const std::string& dir, std::int64_t recorded_step);

/// Throws FormatError when checkpoint `dir`'s training_state/scheduler_state.json has taken
/// another number of steps (`last_epoch`) than training_step.json records: an inconsistent
/// checkpoint. A file without an integer `last_epoch` is an error only when `strict` (checked
/// again after the manifest check, which names a damaged file better).
void check_scheduler_matches_step(const std::string& dir, std::int64_t recorded_step, bool strict);

/// The default CPU generator's state now (a copy).
at::Tensor current_rng_state();
/// Writes generator state `state` (current_rng_state()'s) to rng_state.safetensors `path`.
void save_rng_state(const std::string& path, const at::Tensor& state);
/// Restores the default CPU generator's state from `path`.
void load_rng_state(const std::string& path);

/// Where rank `rank` keeps its generator state in checkpoint `dir`: rank 0 in
/// training_state/rng_state.safetensors, rank r in rng_state_<r>.safetensors. When
/// reading (`for_load`) a rank whose file is absent (the run had fewer ranks) gets rank 0's.
std::string rng_state_path(const std::string& dir, int rank, bool for_load = false);

/// Moves the finished temporary folder `tmp` to `final_dir` and then points
/// `<checkpoints>/last` at it (relative link, replaced atomically).
void publish_checkpoint(const std::string& tmp, const std::string& final_dir);

}  // namespace shardkit::train
