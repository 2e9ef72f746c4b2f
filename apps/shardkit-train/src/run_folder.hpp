// The run's folder: its default name, the paths a resume reads made absolute, whether a new run
// may start in it, and where a run restarted by its launcher continues.
#pragma once

#include <ctime>
#include <string>

#include "config_provenance.hpp"
#include "shardkit/comm.hpp"
#include "shardkit/config.hpp"

namespace shardkit::train {

/// LeRobot's default output folder, named after the local time `now`:
/// outputs/train/<YYYY-MM-DD>/<HH-MM-SS>_<job_name>.
std::string default_output_dir(const std::string& job_name, std::time_t now);

/// The options naming files and folders that a resume reads again (the base model, the
/// adapter, the data, a DeepSpeed config file), made absolute in `config`, and so in
/// train_config.json, with a note in `provenance`: a run resumes from any working directory.
/// Values that name nothing here stay as given.
void make_paths_absolute(Config& config, Provenance& provenance);

/// "" when `output_dir` may hold a new run, else why not (a file of that name, or a folder that
/// already holds a run's checkpoints or metrics).
std::string output_dir_problem(const std::string& output_dir);

/// Where the run starts, the same on every rank of `world` (rank 0 decides). Without a
/// `resume_dir`, a run its launcher restarted (`restart_count` > 0) continues from the newest
/// checkpoint in `output_dir` (newest_checkpoint: saves publish only complete ones), or starts
/// afresh there when there is none; a first start is refused (ConfigError) when the folder already holds a run. Sets `resume_dir` and
/// returns true for a fresh start after a restart. Collective over `world`.
bool agree_on_start(CommGroup& world, const std::string& output_dir, int restart_count, std::string& resume_dir);

}  // namespace shardkit::train
