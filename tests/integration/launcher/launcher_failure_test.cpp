// shardkit-run when things go wrong: a failed or killed rank, signals, restarts, a busy port.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>

#include "launcher_test_support.hpp"

using namespace shardkit::test;
using namespace shardkit::test::launcher;

namespace {

/// Rank 0 records its pid and its child's, then sleeps; rank 1 waits for that, prints
/// two lines and ends with `ending` (a shell command).
std::string failing_pair(const TempDir& dir, const std::string& ending) {
  return write_script(dir, "worker.sh",
                      "d=\"$(dirname \"$0\")\"\n"
                      "echo $$ > \"$d/pid_$RANK\"\n"
                      "if [ \"$RANK\" = 1 ]; then\n"
                      "  i=0; while [ ! -s \"$d/child_0\" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done\n"
                      "  echo 'about to fail'\n"
                      "  echo 'second line' >&2\n"
                      "  " + ending + "\n"
                      "fi\n"
                      "sleep 1000 &\n"
                      "echo $! > \"$d/child_$RANK\"\n"
                      "wait\n");
}

/// worker.sh: writes its pid to ready_<RANK>, then waits for a stop signal, writes which
/// one it got to got_<RANK> ("int" or "term") and exits as shardkit-train would: 130 after
/// SIGINT, 0 after SIGTERM.
void signal_recorder(const TempDir& dir) {
  write_script(dir, "worker.sh",
               "d=\"$(dirname \"$0\")\"\n"
               "trap 'echo int > \"$d/got_$RANK\"; exit 130' INT\n"
               "trap 'echo term > \"$d/got_$RANK\"; exit 0' TERM\n"
               "echo $$ > \"$d/ready_$RANK\"\n"
               "while :; do sleep 0.1; done\n");
}

/// A driver script: starts the launcher with `flags` on worker.sh in the background, waits
/// until ranks 0 and 1 wrote ready_<rank>, sends the launcher `sig` (kill's name: INT, TERM,
/// KILL), and prints "launcher exit code <code>".
std::string signal_driver(const TempDir& dir, const std::string& flags, const std::string& sig,
                          const std::string& env = "") {
  return write_script(
      dir, "driver.sh",
      "d=\"$(dirname \"$0\")\"\n" + env + shell_quote(launcher_path()) + " " + flags +
          " \"$d/worker.sh\" &\n"
          "launcher=$!\n"
          "i=0; while { [ ! -s \"$d/ready_0\" ] || [ ! -s \"$d/ready_1\" ]; } && [ $i -lt 300 ]; do "
          "sleep 0.1; i=$((i+1)); done\n"
          "kill -" + sig + " $launcher\n"
          "wait $launcher\n"
          "echo \"launcher exit code $?\"\n");
}

void check_nothing_survives(const TempDir& dir) {
  for (const char* file : {"pid_0", "child_0", "pid_1"}) {
    const pid_t pid = read_pid(dir / file);
    INFO(file << " = " << pid);
    REQUIRE(pid > 0);
    CHECK_FALSE(process_running(pid));
  }
}

/// A port that something listens on for as long as the object lives.
class BusyPort {
 public:
  BusyPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    ::listen(fd_, 1);
    socklen_t size = sizeof address;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
  }
  ~BusyPort() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace

TEST_CASE("a rank exiting with code 3 stops the others and is named in the report",
          "[launcher][failure]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-fail");
  const auto script = failing_pair(
      dir, "printf '{\"message\": {\"message\": \"ValueError: boom\", \"extraInfo\": {}}}' "
           "> \"$TORCHELASTIC_ERROR_FILE\"; exit 3");
  const auto r = run_launcher("--nproc-per-node=2 --master-port=0 --grace-period-s=3 " +
                              shell_quote(script));
  INFO(r.output);
  CHECK(r.exit_code == 3);  // the failed rank's own code
  CHECK(contains(r.output, "rank 1 (local rank 1, pid " + std::to_string(read_pid(dir / "pid_1")) +
                               ") failed: exited with code 3"));
  CHECK(contains(r.output, "ValueError: boom"));
  CHECK(contains(r.output, "last lines of rank 1:"));
  CHECK(contains(r.output, "    about to fail"));
  CHECK(contains(r.output, "    second line"));
  CHECK_FALSE(contains(r.output, "restarting"));
  check_nothing_survives(dir);
}

TEST_CASE("a rank killed by SIGKILL is reported as signal 9", "[launcher][failure]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-kill");
  const auto script = failing_pair(dir, "kill -9 $$");
  const auto r = run_launcher("--nproc-per-node=2 --master-port=0 --grace-period-s=3 " +
                              shell_quote(script));
  INFO(r.output);
  CHECK(r.exit_code == 128 + 9);  // as a shell reports a process killed by signal 9
  CHECK(contains(r.output, "rank 1 (local rank 1, pid"));
  CHECK(contains(r.output, "failed: killed by signal 9 (SIGKILL)"));
  check_nothing_survives(dir);
}

TEST_CASE("SIGTERM and SIGINT to the launcher reach every worker as sent; the exit code is theirs",
          "[launcher][signals]") {
  SHARDKIT_REQUIRE_GLOO();
  struct Case {
    const char* kill_name;  // as kill(1) takes it
    const char* recorded;   // what signal_recorder's workers write
    int exit_code;          // theirs: 0 after SIGTERM, 130 after SIGINT
  };
  for (const Case& c : {Case{"TERM", "term", 0}, Case{"INT", "int", 130}}) {
    TempDir dir("shardkit-run-stop");
    signal_recorder(dir);
    const auto driver = signal_driver(dir, "--nproc-per-node=2 --master-port=0 --grace-period-s=10", c.kill_name);
    const auto r = run_command(shell_quote(driver));
    const std::string sig = std::string("SIG") + c.kill_name;
    INFO(sig << "\n" << r.output);
    CHECK(contains(r.output, "got " + sig + "; sending " + sig + " to every worker"));
    CHECK(slurp(dir / "got_0") == std::string(c.recorded) + "\n");
    CHECK(slurp(dir / "got_1") == std::string(c.recorded) + "\n");
    CHECK(contains(r.output, "launcher exit code " + std::to_string(c.exit_code) + "\n"));
    CHECK_FALSE(contains(r.output, "last lines of rank"));  // the expected answer is no failure
    CHECK_FALSE(process_running(read_pid(dir / "ready_0")));
    CHECK_FALSE(process_running(read_pid(dir / "ready_1")));
  }
}

TEST_CASE("workers that ignore the stop signal are killed after the grace period", "[launcher][signals]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-stubborn");
  const auto worker = write_script(dir, "worker.sh",
                                   "d=\"$(dirname \"$0\")\"\n"
                                   "trap '' INT TERM\n"
                                   "echo $$ > \"$d/ready_$RANK\"\n"
                                   "while :; do sleep 0.1; done\n");
  const auto driver = signal_driver(dir, "--nproc-per-node=2 --master-port=0 --grace-period-s=1", "INT");
  const auto r = run_command(shell_quote(driver));
  INFO(r.output);
  CHECK(contains(r.output, "launcher exit code 137"));  // the first worker's: SIGKILL
  CHECK(contains(r.output, "got SIGINT"));
  CHECK(contains(r.output, "killed by signal 9 (SIGKILL)"));
  CHECK_FALSE(process_running(read_pid(dir / "ready_0")));
  CHECK_FALSE(process_running(read_pid(dir / "ready_1")));
}

TEST_CASE("workers die with a launcher killed by SIGKILL", "[launcher][signals]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-orphans");
  const auto worker = write_script(dir, "worker.sh",
                                   "echo $$ > \"$(dirname \"$0\")/ready_$RANK\"\n"
                                   "exec sleep 1000\n");
  // A killed launcher cannot remove its error-file folder: keep it inside `dir`.
  const auto driver = signal_driver(dir, "--nproc-per-node=2 --master-port=0", "KILL", "TMPDIR=\"$d\" ");
  const auto r = run_command(shell_quote(driver));
  INFO(r.output);
  CHECK(contains(r.output, "launcher exit code 137"));
  for (const char* file : {"ready_0", "ready_1"}) {
    const pid_t pid = read_pid(dir / file);
    REQUIRE(pid > 0);
    // PR_SET_PDEATHSIG delivers SIGKILL as the launcher dies; allow the kernel a moment.
    for (int i = 0; i < 50 && process_running(pid); ++i) ::usleep(100 * 1000);
    CHECK_FALSE(process_running(pid));
  }
}

TEST_CASE("--max-restarts=1 restarts the group once with TORCHELASTIC_RESTART_COUNT=1",
          "[launcher][restart]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-restart");
  const auto script = write_script(
      dir, "worker.sh",
      "d=\"$(dirname \"$0\")\"\n"
      "echo \"$RANK $TORCHELASTIC_RESTART_COUNT $TORCHELASTIC_MAX_RESTARTS\" >> \"$d/starts\"\n"
      "if [ \"$TORCHELASTIC_RESTART_COUNT\" = 0 ]; then\n"
      // Rank 1 fails only once rank 0 has recorded its start (else the stop may beat it).
      "  if [ \"$RANK\" = 1 ]; then\n"
      "    while ! grep -q '^0 0 ' \"$d/starts\"; do sleep 0.05; done\n"
      "    echo 'first attempt fails'; exit 3\n"
      "  fi\n"
      "  sleep 1000 & wait\n"
      "fi\n"
      "echo \"done in attempt $TORCHELASTIC_RESTART_COUNT\"\n");
  const auto r = run_launcher("--nproc-per-node=2 --master-port=0 --grace-period-s=2 "
                              "--max-restarts=1 --log-dir " + shell_quote(dir / "logs") + " " +
                              shell_quote(script));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "failed: exited with code 3"));
  CHECK(contains(r.output, "restarting all workers (restart 1 of 1)"));
  CHECK(contains(r.output, "[rank0]: done in attempt 1"));
  CHECK(contains(r.output, "[rank1]: done in attempt 1"));
  const auto starts = slurp(dir / "starts");
  INFO(starts);
  CHECK(contains(starts, "0 0 1\n"));
  CHECK(contains(starts, "1 0 1\n"));
  CHECK(contains(starts, "0 1 1\n"));
  CHECK(contains(starts, "1 1 1\n"));
  CHECK(std::count(starts.begin(), starts.end(), '\n') == 4);
  CHECK(contains(slurp(dir / "logs/attempt_0/rank_1.log"), "first attempt fails"));
  CHECK(contains(slurp(dir / "logs/attempt_1/rank_1.log"), "done in attempt 1"));
}

TEST_CASE("a group that keeps failing gives up after --max-restarts", "[launcher][restart]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-giveup");
  const auto script = write_script(dir, "worker.sh",
                                   "echo \"$TORCHELASTIC_RESTART_COUNT\" >> \"$(dirname \"$0\")/starts\"\n"
                                   "exit 5\n");
  const auto r = run_launcher("--nproc-per-node=1 --master-port=0 --max-restarts=2 " +
                              shell_quote(script));
  INFO(r.output);
  CHECK(r.exit_code == 5);  // the last attempt's failed worker's code
  CHECK(contains(r.output, "restart 1 of 2"));
  CHECK(contains(r.output, "restart 2 of 2"));
  CHECK_FALSE(contains(r.output, "restart 3"));
  CHECK(slurp(dir / "starts") == "0\n1\n2\n");
}

TEST_CASE("a busy --master-port is named with the fix", "[launcher][rendezvous]") {
  SHARDKIT_REQUIRE_GLOO();
  BusyPort busy;
  const auto r = run_launcher("--nproc-per-node=1 --master-port=" + std::to_string(busy.port()) +
                              " true");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "port " + std::to_string(busy.port()) + " is already in use"));
  CHECK(contains(r.output, "--master-port=0"));
}
