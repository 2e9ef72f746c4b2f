// The training entry point behind shardkit-train.
#pragma once

namespace shardkit {

/// Runs `shardkit-train` with its command line: parses and validates the
/// configuration, loads plugins, trains, checkpoints. Returns the process exit code
/// (0 success, 1 runtime failure, 2 configuration error); never throws.
int train_main(int argc, char** argv);

}  // namespace shardkit
