// Graceful preemption: SIGTERM asks the trainer to checkpoint at the next update and exit 0.
#pragma once

namespace shardkit::train {

/// Installs the SIGTERM handler (idempotent). The handler only sets a flag.
void install_preemption_handler();

/// True once SIGTERM arrived.
bool preemption_requested();

/// Sets the flag as SIGTERM would (tests).
void request_preemption();

}  // namespace shardkit::train
