// Starting comm_worker as several real processes on loopback, and reading what each rank printed.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "test_support.hpp"  // free_port()

namespace shardkit::test {

/// A socket listening on a free port until destroyed: makes that port busy.
class BusyPort {
 public:
  BusyPort();
  ~BusyPort();
  BusyPort(const BusyPort&) = delete;
  BusyPort& operator=(const BusyPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

/// How to start the ranks of one run.
struct WorkerRun {
  int world_size = 2;
  std::vector<int> ranks;  ///< which ranks to start (default: all)
  std::string scenario = "collectives";
  std::vector<std::string> args;  ///< extra comm_worker arguments
  int master_port = 0;            ///< 0 = a free port
  /// Extra environment, e.g. {"TORCHELASTIC_USE_AGENT_STORE", "True"}.
  std::map<std::string, std::string> env;
  /// Seconds to wait before starting rank 0 (tests that peers wait for the store host).
  double rank0_delay_s = 0;
};

/// What each started rank did, and how long the whole run took.
struct RunOutcome {
  std::map<int, int> exit_code;        ///< by rank
  std::map<int, std::string> output;   ///< by rank: stdout and stderr
  double seconds = 0;
  int master_port = 0;
  std::string all_output() const;
};

/// Runs the ranks torchrun-style (RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT)
/// in parallel, each bounded by `timeout` so a hang fails the test instead of blocking it.
RunOutcome run_workers(const WorkerRun& run);

/// build/tests/programs/comm_worker.
std::string comm_worker_path();

}  // namespace shardkit::test
