// The stop signals of shardkit-train: SIGTERM and SIGINT recorded, a second SIGINT ends the process.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

#include "../../../apps/shardkit-train/src/preemption.hpp"

using namespace shardkit::train;

namespace {

/// Runs `body` in a forked child (signal dispositions are per process) and returns its
/// waitpid() status; `body` returns the child's exit code.
int in_child(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST_CASE("the first SIGINT is recorded and the second ends the process at once", "[train][signals]") {
  const int status = in_child([] {
    install_preemption_handler();
    ::raise(SIGINT);
    if (stop_signal() != SIGINT) return 3;
    ::raise(SIGINT);
    return 4;  // not reached: the default action ends the process
  });
  INFO("wait status " << status);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
}

TEST_CASE("SIGTERM never ends the process, and the first stop signal is the one recorded",
          "[train][signals]") {
  const int status = in_child([] {
    install_preemption_handler();
    ::raise(SIGTERM);
    ::raise(SIGTERM);
    ::raise(SIGINT);
    return stop_signal() == SIGTERM ? 0 : 3;
  });
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a SIGINT ignored at start (a shell's background job) stays ignored", "[train][signals]") {
  const int status = in_child([] {
    ::signal(SIGINT, SIG_IGN);
    install_preemption_handler();
    ::raise(SIGINT);
    return stop_signal() == 0 ? 0 : 3;
  });
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("exit codes after a stop: 0 for SIGTERM, 130 for SIGINT", "[train][signals]") {
  CHECK(exit_code_after_stop(SIGTERM) == 0);
  CHECK(exit_code_after_stop(SIGINT) == 130);
  CHECK(signal_name(SIGINT) == "SIGINT");
  CHECK(signal_name(SIGTERM) == "SIGTERM");
}
