// shardkit-run: the torchrun-compatible launcher (one launcher per node, N workers each).
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cpu_binding.hpp"
#include "launch_options.hpp"
#include "rendezvous.hpp"
#include "shardkit/error.hpp"
#include "supervisor.hpp"
#include "worker_env.hpp"
#include "worker_process.hpp"

namespace {
namespace fs = std::filesystem;
using namespace shardkit::run;

/// A private folder for the workers' error files, removed when the launcher ends.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    const std::string base = tmp && *tmp ? tmp : "/tmp";
    std::string pattern = base + "/shardkit-run-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw shardkit::RuntimeError("cannot create a folder for the workers' error files under " +
                                   base + " (set TMPDIR to a writable folder)");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

int launch(const LaunchOptions& options) {
  const std::string program_path = resolve_program(options.program.front());
  for (const auto& note : options.ignored_notes) debug(note);
  if (!options.nproc_note.empty()) say(options.nproc_note);
  // Orphans of a worker's subtree are re-parented here instead of to init, so the
  // launcher can reap them and tell when a worker's process group is really empty.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);

  Rendezvous rendezvous(options);
  rendezvous.join_nodes();
  if (omp_threads_default(options))
    say("setting OMP_NUM_THREADS=1 for each worker by default, to avoid overloading the "
        "system; tune it for your application if needed");
  // The CPUs of each local rank under --cpu-bind=cores (every attempt's), empty otherwise.
  std::vector<std::vector<int>> cpu_shares;
  if (options.cpu_bind) {
    cpu_shares = cpu_bind_shares(options.nproc_per_node);
    std::string text;
    for (std::size_t r = 0; r < cpu_shares.size(); ++r)
      text += (r ? ", " : "") + std::string("local rank ") + std::to_string(r) + " on CPU " + cpu_list_text(cpu_shares[r]);
    say("--cpu-bind=cores: " + text);
  }
  int code;
  {
    ScratchDir scratch;
    Supervisor supervisor(options, rendezvous, program_path, scratch.path(), std::move(cpu_shares));
    code = supervisor.run();
  }
  try {
    rendezvous.finish();
  } catch (const std::exception& e) {
    say(std::string("warning: ") + e.what());
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  LaunchOptions options;
  try {
    options = parse_launch_options(std::vector<std::string>(argv + 1, argv + argc));
    if (options.help) {
      std::cout << launch_usage();
      return 0;
    }
    return launch(options);
  } catch (const shardkit::ConfigError& e) {
    say(std::string("error: ") + e.what());
    say("run 'shardkit-run --help' for the flags");
    return 2;
  } catch (const std::exception& e) {
    say(std::string("error: ") + e.what());
    return 1;
  }
}
