// Turns stop signals and SIGCHLD into bytes on a pipe, so the launcher's poll() loop sees them.
#pragma once

#include <vector>

namespace shardkit::run {

/// While alive, SIGINT, SIGTERM, SIGHUP, SIGQUIT (the signals torchrun forwards) and
/// SIGCHLD are caught and written (one byte each) to a non-blocking pipe that poll()
/// can watch; SIGPIPE is ignored for the whole process
/// (a closed stdout must not kill the launcher while workers run). The destructor
/// restores the previous handlers. One instance at a time.
class SignalPipe {
 public:
  SignalPipe();
  ~SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  /// The read end, for poll().
  int fd() const;
  /// The signals received since the last call, in order.
  std::vector<int> drain();
};

/// For a freshly forked child, before exec: default dispositions and an empty signal
/// mask (ignored signals would otherwise stay ignored across exec). Async-signal-safe.
void reset_signals_in_child();

}  // namespace shardkit::run
