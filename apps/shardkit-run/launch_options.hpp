// shardkit-run's command line: torchrun-compatible launcher flags, then the program and its arguments.
#pragma once

#include <string>
#include <vector>

namespace shardkit::run {

/// What the user asked for, validated. Defaults follow torchrun's.
struct LaunchOptions {
  int nproc_per_node = 1;              ///< --nproc-per-node (auto, cpu and gpu resolved)
  /// How a non-numeric --nproc-per-node was resolved, for the user ("" when numeric).
  std::string nproc_note;
  int nnodes = 1;                      ///< --nnodes (a range MIN:MAX only with MIN == MAX)
  int node_rank = 0;                   ///< --node-rank
  std::string master_addr = "127.0.0.1";  ///< --master-addr, or the host of --rdzv-endpoint
  int master_port = 29500;             ///< --master-port, or the port of --rdzv-endpoint; 0 = free
  /// The flag the port came from, for error messages ("--master-port" or "--rdzv-endpoint").
  std::string port_flag = "--master-port";
  std::string rdzv_backend = "static";  ///< --rdzv-backend: c10d or static, same behaviour
  std::string run_id = "none";          ///< --rdzv-id, exported as TORCHELASTIC_RUN_ID
  bool standalone = false;              ///< --standalone
  int max_restarts = 0;                 ///< --max-restarts
  std::string log_dir;                  ///< --log-dir ("" = no log files)
  double monitor_interval_s = 0.1;      ///< --monitor-interval
  double timeout_s = 900;               ///< --timeout-s: rendezvous and store waits
  double grace_period_s = 30;           ///< --grace-period-s: SIGTERM -> SIGKILL delay
  int omp_threads = 0;                  ///< accelerate's --num-cpu-threads-per-process (0 = not given)
  bool cpu_bind = false;                ///< --cpu-bind=cores: each local rank on its own CPUs
  bool help = false;                    ///< --help
  std::vector<std::string> program;     ///< the program, then its arguments
  /// Flags that were accepted but change nothing, one note each (printed at debug level).
  std::vector<std::string> ignored_notes;

  int world_size() const { return nnodes * nproc_per_node; }
};

/// Parses argv[1..]. Launcher flags come first, in `--flag=value` or `--flag value` form,
/// each spelled with dashes or underscores; the first argument that is not a flag (or
/// everything after `--`) is the program. torchrun's flags, or `accelerate launch`'s for the
/// same things (--num-processes, the total over --num-machines; --machine-rank,
/// --main-process-ip, --main-process-port; --multi-gpu, --cpu, --same-network accepted). Throws shardkit::ConfigError naming the flag,
/// the value and what is allowed; an unknown flag gets a "did you mean".
LaunchOptions parse_launch_options(const std::vector<std::string>& args);

/// A number of seconds as flags take it: 30, 0.5.
std::string seconds_text(double seconds);

/// The --help text.
const char* launch_usage();

}  // namespace shardkit::run
