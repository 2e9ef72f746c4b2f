// shardkit-llm: AITraining's request -> shardkit-train's command line -> one or several processes.
#include "llm_main.hpp"

#include <torch/cuda.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "llm_fields.hpp"
#include "llm_params.hpp"
#include "llm_translate.hpp"
#include "project_output.hpp"
#include "shardkit/error.hpp"
#include "teed_run.hpp"
#include "worker_process.hpp"

namespace shardkit::llm {
namespace fs = std::filesystem;
namespace {

constexpr const char* kHelp =
    "usage: shardkit-llm --train --model FOLDER --data-path FOLDER --project-name NAME [AITraining's flags]\n"
    "       shardkit-llm --config config.yaml [flags that override it]\n\n"
    "AITraining's `aitraining llm --train` command line and YAML config, trained by shardkit-train:\n"
    "every LLMTrainingParams field is a flag (--field-name VALUE or --field_name=VALUE; bools as\n"
    "--peft, and --no-<field> to turn one off), with AITraining's defaults. The shardkit-train (or\n"
    "shardkit-run) command it runs is printed first; the output also goes to <project>/autotrain.log.\n\n"
    "Processes: one per visible CUDA device (CUDA_VISIBLE_DEVICES), one on CPU, or\n"
    "AUTOTRAIN_FORCE_NUM_PROCESSES; several train with DDP, --distributed-backend deepspeed with ZeRO-3.\n"
    "--print_config and --dry_run are passed to shardkit-train (nothing is trained).\n"
    "--training_config <project>/training_params.json runs a recorded run again (flags override it).\n\n"
    "Fields shardkit-llm acts on (default):\n";

std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// AITraining's process count: AUTOTRAIN_FORCE_NUM_PROCESSES (else the older
/// AUTOTRAIN_FORCE_NUM_GPUS, with a warning), 0 meaning one process on the CPU; else the visible
/// CUDA devices (at least 1). `cuda`: whether the ranks run on GPUs.
int process_count(bool& cuda) {
  const auto devices = static_cast<int>(torch::cuda::device_count());
  cuda = devices > 0;
  const char* name = "AUTOTRAIN_FORCE_NUM_PROCESSES";
  const char* forced = std::getenv(name);
  if (!forced && (forced = std::getenv("AUTOTRAIN_FORCE_NUM_GPUS"))) {
    name = "AUTOTRAIN_FORCE_NUM_GPUS";
    std::cerr << "shardkit-llm: warning: AUTOTRAIN_FORCE_NUM_GPUS is deprecated (as in AITraining); it sets the "
                 "process count: use AUTOTRAIN_FORCE_NUM_PROCESSES\n";
  }
  if (forced && *forced) {
    std::size_t used = 0;
    int n = -1;
    try {
      n = std::stoi(forced, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != std::strlen(forced) || n < 0)
      throw ConfigError(std::string(name) + "=" + forced + ": give a number of processes (0: one, on the CPU)");
    if (n == 0) {
      cuda = false;
      return 1;
    }
    return n;
  }
  return std::max(1, devices);
}

/// The world size of the launcher this process runs under (torchrun's WORLD_SIZE, srun's
/// SLURM_NTASKS when above 1), or 0 when none started it.
int launcher_world_size() {
  const auto number = [](const char* name) {
    const char* v = std::getenv(name);
    try {
      return v && *v ? std::stoi(v) : 0;
    } catch (const std::exception&) {
      return 0;
    }
  };
  if (std::getenv("WORLD_SIZE")) return std::max(1, number("WORLD_SIZE"));
  if (std::getenv("SLURM_PROCID") && number("SLURM_NTASKS") > 1) return number("SLURM_NTASKS");
  return 0;
}

/// The programs beside this one (shardkit-train, shardkit-run), else on PATH (ConfigError when
/// neither has it).
std::string sibling(const std::string& name) {
  std::error_code ec;
  const auto self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    if (const auto p = self.parent_path() / name; fs::exists(p, ec)) return p.string();
  return run::resolve_program(name);
}

int run(const std::vector<std::string>& args) {
  auto request = parse_command_line(args);
  if (request.help) {
    std::cout << kHelp;
    for (const auto& f : fields())
      std::cout << "  --" << f.name << " (" << (f.default_value ? f.default_value : "None") << ")\n";
    return 0;
  }
  if (!request.train && request.config_path.empty() && request.training_config.empty())
    throw ConfigError("nothing to do: give --train with AITraining's flags (--model, --data-path, --project-name, "
                      "...), or --config config.yaml; --help lists the flags");
  const auto& params = request.params;
  // Where AITraining starts its interactive wizard, shardkit-llm says what is missing.
  std::vector<std::string> missing;
  if (!params.given("project_name")) missing.push_back("--project-name");
  if (!params.given("data_path")) missing.push_back("--data-path");
  if (!params.given("model")) missing.push_back("--model");
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw ConfigError("missing " + list + " (AITraining would ask for them in its interactive wizard; shardkit-llm "
                      "asks nothing): give them on the command line or in --config");
  }

  std::error_code ec;
  bool cuda = false;
  // Inside a launcher already (torchrun or shardkit-run on each node: WORLD_SIZE; srun with several
  // tasks: SLURM_NTASKS), each rank runs shardkit-train itself, and the job's size is the launcher's.
  const int launched_world = launcher_world_size();
  const bool launched = launched_world > 0;
  int processes = process_count(cuda);
  if (launched) processes = launched_world;
  // What is said, and the project's files, come from one process: rank 0 of a launcher's job.
  // A launcher's rank (torchrun's RANK, srun's SLURM_PROCID, MPI's); unknown: not rank 0.
  const char* rank = nullptr;
  for (const char* name : {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (!rank) rank = std::getenv(name);
  const bool first = !launched || (rank && std::string(rank) == "0");
  auto t = translate(params, processes, cuda);
  if (first)
    for (const auto& w : t.warnings) std::cerr << "shardkit-llm: warning: " << w << "\n";
  std::vector<std::string> argv;
  std::string program;
  if (processes > 1 && !launched && request.passthrough.empty()) {
    program = sibling("shardkit-run");
    argv = {"shardkit-run", "--nproc-per-node=" + std::to_string(processes), sibling("shardkit-train")};
  } else {
    program = sibling("shardkit-train");
    argv = {"shardkit-train"};
  }
  argv.insert(argv.end(), t.train_args.begin(), t.train_args.end());
  argv.insert(argv.end(), request.passthrough.begin(), request.passthrough.end());
  std::string shown;
  for (std::size_t i = 0; i < argv.size(); ++i)
    shown += (i ? " " : "") + shell_word(i == 2 && argv[0] == "shardkit-run" ? "shardkit-train" : argv[i]);
  const bool writes_project = request.passthrough.empty() && first;
  if (first)
    std::cerr << "shardkit-llm: " << (processes > 1 ? std::to_string(processes) + " processes" : std::string("1 process"))
              << (cuda ? "" : " (no CUDA device)") << "; running:\n  " << shown << "\n";
  // shardkit-train refuses a folder that holds another run (AITraining overwrites it): said here,
  // before anything is written.
  if (writes_project && std::find(argv.begin(), argv.end(), "--resume=true") == argv.end() &&
      fs::exists(fs::path(t.output_dir) / "checkpoints", ec) && !fs::is_empty(fs::path(t.output_dir) / "checkpoints", ec))
    throw ConfigError(t.output_dir + " holds a run already (checkpoints/): continue it with --resume-from-checkpoint "
                      "latest, give another --project-name, or remove the folder (AITraining would overwrite it; "
                      "shardkit keeps it)");
  std::string log_file;
  if (writes_project) {
    fs::create_directories(t.output_dir);
    log_file = (fs::path(t.output_dir) / "autotrain.log").string();
    // AITraining's record of the run: `shardkit-llm --training_config` runs it again.
    std::ofstream(fs::path(t.output_dir) / "training_params.json") << training_params_json(params);
  }
  const auto code = run_teed(program, argv, log_file);
  // AITraining's project folder, laid out once the run has succeeded.
  if (code == 0 && writes_project) {
    std::ofstream log(log_file, std::ios::app);
    for (const auto& line : finish_project(t.output_dir, params)) {
      std::cerr << "shardkit-llm: " << line << "\n";
      log << "shardkit-llm: " << line << "\n";
    }
  }
  return code;
}

}  // namespace

int llm_main(int argc, char** argv) {
  try {
    return run({argv + 1, argv + argc});
  } catch (const ConfigError& e) {
    std::cerr << "shardkit-llm: configuration error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "shardkit-llm: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace shardkit::llm
