// Runs a program as a child, its output shown here and also appended to a log file (AITraining's
// {project}/autotrain.log); stop signals received here are passed on to it.
#pragma once

#include <string>
#include <vector>

namespace shardkit::llm {

/// Runs `program_path` with `argv` (argv[0] as shown) and this environment; its stdout and stderr
/// go to ours and, when `log_file` is not empty, to that file too. Returns its exit code as a
/// shell shows it (128 + N when killed by signal N). RuntimeError when it cannot be started or
/// the log file cannot be opened.
int run_teed(const std::string& program_path, const std::vector<std::string>& argv, const std::string& log_file);

}  // namespace shardkit::llm
