// Graceful stops: SIGTERM (preemption) and SIGINT (Ctrl-C) ask the trainer to checkpoint at the next update and exit.
#pragma once

#include <string>

namespace shardkit::train {

/// Installs the SIGTERM and SIGINT handlers (idempotent). The handlers only record the
/// first signal. A second SIGINT ends the process at once (default action). A SIGINT that
/// was ignored when the process started (a background job of a shell) stays ignored.
void install_preemption_handler();

/// The first stop signal received (SIGTERM or SIGINT); 0 when none.
int stop_signal();

/// Records `sig` as if it had arrived (tests).
void request_preemption(int sig);

/// "SIGINT", "SIGTERM", or "signal N".
std::string signal_name(int sig);

/// The exit code of a run that a stop signal ended after its checkpoint: 0 after SIGTERM
/// (a graceful preemption, the run can be resumed), 128 + SIGINT = 130 after an
/// interrupt, so that `shardkit-train ... && next` does not go on as if training finished.
int exit_code_after_stop(int sig);

}  // namespace shardkit::train
