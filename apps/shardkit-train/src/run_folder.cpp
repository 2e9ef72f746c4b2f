// The run's folder: default name, absolute paths, the check before a new run, the start after a restart.
#include "run_folder.hpp"

#include <filesystem>

#include "checkpoint_manifest.hpp"
#include "rank_agreement.hpp"
#include "shardkit/logging.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;

std::string default_output_dir(const std::string& job_name, std::time_t now) {
  std::tm local{};
  localtime_r(&now, &local);
  char date[32], time[32];
  std::strftime(date, sizeof(date), "%Y-%m-%d", &local);
  std::strftime(time, sizeof(time), "%H-%M-%S", &local);
  return "outputs/train/" + std::string(date) + "/" + time + "_" + job_name;
}

void make_paths_absolute(Config& config, Provenance& provenance) {
  for (const auto* key : {"policy.path", "peft.adapter_path", "dataset.path", "dataset.validation_path",
                          "dataset.root", "accelerator.zero.config_file"}) {
    if (!config.has(key)) continue;
    const auto given = config.get_string(key);
    std::error_code ec;
    if (given.empty() || fs::path(given).is_absolute() || !fs::exists(given, ec)) continue;
    auto absolute = fs::absolute(given, ec).lexically_normal();
    if (ec) continue;
    if (absolute.filename().empty()) absolute = absolute.parent_path();
    config.set(key, absolute.string());
    provenance.add_note(key, "stored absolute; given as " + given);
  }
}

std::string output_dir_problem(const std::string& output_dir) {
  const fs::path dir(output_dir);
  if (fs::exists(dir) && !fs::is_directory(dir)) return "--output_dir=" + output_dir + " exists and is not a folder";
  if (fs::exists(dir / "checkpoints") || fs::exists(dir / "metrics.jsonl"))
    return "--output_dir=" + output_dir +
           " already holds a run; pass --resume=true to continue it, or choose another "
           "--output_dir (nothing was overwritten)";
  return "";
}

bool agree_on_start(CommGroup& world, const std::string& output_dir, int restart_count, std::string& resume_dir) {
  if (!resume_dir.empty()) return false;
  if (restart_count == 0) {
    rank0_verdict(world, [&output_dir] { return output_dir_problem(output_dir); });
    return false;
  }
  // A launcher restarted the group: continue from the last checkpoint if the failed attempt
  // left one, else start afresh in the same folder. Rank 0 decides.
  std::string found;
  if (world.rank() == 0) {
    found = newest_checkpoint((fs::path(output_dir) / "checkpoints").string());
    if (!found.empty()) found = fs::canonical(found).string();
  }
  resume_dir = from_rank0(world, found);
  logger()->info("restart {}: {}", restart_count,
                 resume_dir.empty() ? "no checkpoint yet, starting afresh in " + output_dir
                                    : "resuming from " + resume_dir);
  return resume_dir.empty();
}

}  // namespace shardkit::train
