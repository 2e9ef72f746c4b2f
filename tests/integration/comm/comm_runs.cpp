// Multi-process runs of comm_worker for the comm tests.
#include "comm_runs.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

#include "test_support.hpp"

namespace shardkit::test {
namespace {

int listening_socket(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(fd, 4) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot bind a free port");
  }
  *port = ntohs(address.sin_port);
  return fd;
}

}  // namespace

BusyPort::BusyPort() { fd_ = listening_socket(&port_); }
BusyPort::~BusyPort() { ::close(fd_); }

std::string comm_worker_path() { return std::string(SHARDKIT_TEST_PROGRAM_DIR) + "/comm_worker"; }

std::string RunOutcome::all_output() const {
  std::string text;
  for (const auto& [rank, out] : output) text += "--- rank " + std::to_string(rank) + " ---\n" + out;
  return text;
}

RunOutcome run_workers(const WorkerRun& run) {
  TempDir dir("shardkit-comm");
  RunOutcome outcome;
  outcome.master_port = run.master_port ? run.master_port : free_port();
  std::vector<int> ranks = run.ranks;
  if (ranks.empty())
    for (int r = 0; r < run.world_size; ++r) ranks.push_back(r);
  // Each rank in the background with its own output and exit-code files; `timeout`
  // turns a hang into exit code 124 rather than a stuck test.
  std::string script;
  for (const int rank : ranks) {
    std::string env = "env -u TORCHELASTIC_USE_AGENT_STORE -u TORCHELASTIC_RESTART_COUNT";
    const std::map<std::string, std::string> base = {
        {"RANK", std::to_string(rank)},        {"WORLD_SIZE", std::to_string(run.world_size)},
        {"LOCAL_RANK", std::to_string(rank)},  {"LOCAL_WORLD_SIZE", std::to_string(run.world_size)},
        {"MASTER_ADDR", "127.0.0.1"},          {"MASTER_PORT", std::to_string(outcome.master_port)},
        {"SHARDKIT_PLUGIN_PATH", SHARDKIT_PLUGIN_DIR}};
    for (const auto& [k, v] : base) env += " " + k + "=" + shell_quote(v);
    for (const auto& [k, v] : run.env) env += " " + k + "=" + shell_quote(v);
    std::string command = env + " timeout -k 5 120 " + shell_quote(comm_worker_path()) + " " +
                          shell_quote(run.scenario);
    for (const auto& a : run.args) command += " " + shell_quote(a);
    const auto out = shell_quote(dir / ("out." + std::to_string(rank)));
    const auto rc = shell_quote(dir / ("rc." + std::to_string(rank)));
    const std::string delay =
        rank == 0 && run.rank0_delay_s > 0 ? "sleep " + std::to_string(run.rank0_delay_s) + "; " : "";
    script += "(" + delay + command + " >" + out + " 2>&1; echo $? >" + rc + ") & ";
  }
  script += "wait";
  const auto start = std::chrono::steady_clock::now();
  run_command("sh -c " + shell_quote(script));
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const int rank : ranks) {
    outcome.output[rank] = slurp(dir / ("out." + std::to_string(rank)));
    const auto rc = slurp(dir / ("rc." + std::to_string(rank)));
    outcome.exit_code[rank] = rc.empty() ? -1 : std::stoi(rc);
  }
  return outcome;
}

}  // namespace shardkit::test
