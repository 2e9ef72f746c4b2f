// shardkit-llm's entry point: AITraining's `llm --train` command line or YAML, trained by shardkit.
#pragma once

namespace shardkit::llm {

/// Reads the AITraining request, prints the shardkit-train (or shardkit-run) command that does
/// it, and runs that with the output also in {project}/autotrain.log. Returns the exit code: 0,
/// 2 for a configuration error (what is missing or cannot be done, said), else the run's.
int llm_main(int argc, char** argv);

}  // namespace shardkit::llm
