// Supervisor: one attempt after another, the failure report, the restart decision.
#include "supervisor.hpp"

#include <signal.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "error_file.hpp"
#include "shardkit/error.hpp"
#include "worker_env.hpp"

namespace shardkit::run {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void say(const std::string& message) { write_fully(STDERR_FILENO, "shardkit-run: " + message + "\n"); }

void debug(const std::string& message) {
  const char* level = std::getenv("LOGLEVEL");
  if (level && ::strcasecmp(level, "DEBUG") == 0) say("[debug] " + message);
}

namespace {

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
}

void make_dirs(const fs::path& dir, const std::string& what) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw RuntimeError("cannot create " + dir.string() + " (" + what + "): " + ec.message());
}

/// "rank 1 (node 0, pid 1234) exited with code 3": what other nodes' workers read.
std::string store_description(const Worker& w, int node) {
  return "rank " + std::to_string(w.rank) + " (node " + std::to_string(node) + ", pid " +
         std::to_string(w.pid) + ") " + (WIFSIGNALED(w.status) ? "was " : "") +
         describe_exit(w.status);
}

/// What the workers get for a stop signal the launcher received: SIGINT and SIGTERM as
/// they are (a program may treat an interrupt differently from a preemption), SIGHUP and
/// SIGQUIT as SIGTERM, the one stop request every worker is expected to handle.
int forwarded_signal(int received) { return received == SIGINT ? SIGINT : SIGTERM; }

int first_unclean(const WorkerGroup& group) {
  for (std::size_t i : group.exit_order())
    if (!exited_cleanly(group.workers()[i].status)) return static_cast<int>(i);
  return -1;
}

}  // namespace

Supervisor::Supervisor(const LaunchOptions& options, Rendezvous& rendezvous,
                       std::string program_path, std::string scratch_dir,
                       std::vector<std::vector<int>> cpu_shares)
    : options_(options),
      rendezvous_(rendezvous),
      program_path_(std::move(program_path)),
      scratch_dir_(std::move(scratch_dir)),
      cpu_shares_(std::move(cpu_shares)) {}

std::vector<WorkerSpec> Supervisor::worker_specs(int attempt, std::vector<std::string>& log_paths,
                                                 std::vector<std::string>& error_files) const {
  std::vector<WorkerSpec> specs;
  const std::string attempt_dir = "attempt_" + std::to_string(attempt);
  if (!options_.log_dir.empty()) make_dirs(fs::path(options_.log_dir) / attempt_dir, "--log-dir");
  for (int local = 0; local < options_.nproc_per_node; ++local) {
    WorkerSpec spec;
    if (!cpu_shares_.empty()) spec.cpus = cpu_shares_[static_cast<std::size_t>(local)];
    spec.local_rank = local;
    spec.rank = options_.node_rank * options_.nproc_per_node + local;
    const std::string rank_name = "rank_" + std::to_string(spec.rank);
    const fs::path error_dir = fs::path(scratch_dir_) / attempt_dir / rank_name;
    make_dirs(error_dir, "error files");
    error_files.push_back((error_dir / "error.json").string());
    log_paths.push_back(options_.log_dir.empty()
                            ? std::string()
                            : (fs::path(options_.log_dir) / attempt_dir / (rank_name + ".log")).string());
    spec.program_path = program_path_;
    spec.argv = options_.program;
    WorkerPlace place;
    place.local_rank = local;
    place.restart_count = attempt;
    place.master_addr = rendezvous_.master_addr();
    place.master_port = rendezvous_.master_port();
    place.error_file = error_files.back();
    spec.env = worker_environment(options_, place);
    specs.push_back(std::move(spec));
  }
  return specs;
}

AttemptOutcome Supervisor::watch(WorkerGroup& group, int attempt) {
  const auto interval =
      std::chrono::milliseconds(static_cast<std::int64_t>(options_.monitor_interval_s * 1000.0));
  const auto store = rendezvous_.attempt_store(attempt);
  const char* failure_key = store_keys::kFailure;
  AttemptOutcome outcome;
  auto next_store_check = Clock::now() + interval;
  for (;;) {
    group.pump(interval);
    if (const int sig = group.interrupt_signal()) {
      const int forwarded = forwarded_signal(sig);
      say("got " + signal_name(sig) + "; sending " + signal_name(forwarded) +
          " to every worker (SIGKILL after " + seconds_text(options_.grace_period_s) + " s)");
      group.stop(options_.grace_period_s, forwarded);
      outcome.kind = AttemptOutcome::Kind::Interrupted;
      outcome.signal = sig;
      outcome.worker = first_unclean(group);
      return outcome;
    }
    if (const int failed = first_unclean(group); failed >= 0) {
      const Worker& w = group.workers()[failed];
      try {
        store->set(failure_key, store_description(w, options_.node_rank));
      } catch (const std::exception& e) {
        debug(std::string("could not record the failure in the store: ") + e.what());
      }
      group.stop(options_.grace_period_s);
      outcome.kind = AttemptOutcome::Kind::Failed;
      outcome.worker = failed;
      return outcome;
    }
    if (group.all_exited()) {
      group.stop(options_.grace_period_s);  // whatever a worker left behind in its group
      return outcome;
    }
    // pump() returns at every output line; the store is asked at most once per interval.
    if (options_.nnodes > 1 && Clock::now() >= next_store_check) {
      next_store_check = Clock::now() + interval;
      try {
        if (store->check({failure_key})) {
          outcome.kind = AttemptOutcome::Kind::RemoteFailed;
          outcome.detail = store->get(failure_key);
        }
      } catch (const std::exception& e) {
        outcome.kind = AttemptOutcome::Kind::StoreLost;
        outcome.detail = e.what();
      }
      if (outcome.kind != AttemptOutcome::Kind::Succeeded) {
        group.stop(options_.grace_period_s);
        return outcome;
      }
    }
  }
}

AttemptOutcome Supervisor::run_attempt(int attempt) {
  std::vector<std::string> log_paths, error_files;
  const auto specs = worker_specs(attempt, log_paths, error_files);
  SignalPipe signals;
  WorkerGroup group(signals);
  group.start(specs, log_paths, error_files, options_.grace_period_s);
  debug("attempt " + std::to_string(attempt) + ": started ranks " +
        std::to_string(specs.front().rank) + ".." + std::to_string(specs.back().rank) + " of " +
        std::to_string(options_.world_size()) + " (store " + rendezvous_.master_addr() + ":" +
        std::to_string(rendezvous_.master_port()) + ")");
  AttemptOutcome outcome = watch(group, attempt);
  if (outcome.kind != AttemptOutcome::Kind::Interrupted)
    outcome.signal = group.interrupt_signal();  // e.g. Ctrl-C while stopping after a failure
  if (outcome.worker >= 0) outcome.exit_code = shell_exit_code(group.workers()[outcome.worker].status);
  report(group, outcome);
  return outcome;
}

void Supervisor::report(const WorkerGroup& group, const AttemptOutcome& outcome) const {
  using Kind = AttemptOutcome::Kind;
  if (outcome.kind == Kind::RemoteFailed) {
    say("stopped this node's workers because a worker on another node failed: " + outcome.detail);
    return;
  }
  if (outcome.kind == Kind::StoreLost) {
    say("stopped this node's workers: lost the rendezvous store at " + rendezvous_.master_addr() +
        ":" + std::to_string(rendezvous_.master_port()) + " (did node 0's launcher exit?): " +
        outcome.detail);
    return;
  }
  if (outcome.worker < 0) return;
  const Worker& w = group.workers()[outcome.worker];
  const std::string who = "rank " + std::to_string(w.rank) + " (local rank " +
                          std::to_string(w.local_rank) + ", pid " + std::to_string(w.pid) + ")";
  if (outcome.kind == Kind::Interrupted &&
      shell_exit_code(w.status) == 128 + forwarded_signal(outcome.signal)) {
    // The usual answer to an interrupt (130 after SIGINT): no failure report.
    say("stopped after " + signal_name(outcome.signal) + ": " + who + " " + describe_exit(w.status));
    return;
  }
  if (outcome.kind == Kind::Interrupted)
    say(who + " did not exit cleanly after " + signal_name(outcome.signal) + ": " +
        describe_exit(w.status) +
        (w.sigkilled ? " (still running after --grace-period-s)" : ""));
  else
    say(who + " failed: " + describe_exit(w.status));
  if (const std::string message = read_error_message(w.error_file); !message.empty())
    say("error file of rank " + std::to_string(w.rank) + ": " + message);
  const auto& lines = w.output->last_lines();
  if (lines.empty()) {
    say("rank " + std::to_string(w.rank) + " printed nothing");
  } else {
    std::string text = "last lines of rank " + std::to_string(w.rank) + ":";
    for (const auto& line : lines) text += "\n    " + line;
    say(text);
  }
  int killed = 0;
  for (const auto& other : group.workers()) killed += other.sigkilled && &other != &w ? 1 : 0;
  if (killed > 0)
    say(std::to_string(killed) + " other worker(s) ignored SIGTERM for --grace-period-s=" +
        seconds_text(options_.grace_period_s) + " and were killed with SIGKILL");
}

int Supervisor::run() {
  using Kind = AttemptOutcome::Kind;
  for (int attempt = 0;; ++attempt) {
    if (attempt > 0) rendezvous_.sync_restart(attempt);
    const AttemptOutcome outcome = run_attempt(attempt);
    switch (outcome.kind) {
      case Kind::Succeeded:
        return 0;
      case Kind::Interrupted:
        return outcome.worker < 0 ? 0 : outcome.exit_code;
      case Kind::StoreLost:
        return 1;
      case Kind::Failed:
      case Kind::RemoteFailed:
        break;
    }
    if (outcome.signal != 0) {
      say("not restarting: got " + signal_name(outcome.signal) + " while stopping the workers");
      return outcome.exit_code;
    }
    if (attempt >= options_.max_restarts) {
      if (options_.max_restarts > 0)
        say("giving up: no restarts left (--max-restarts=" + std::to_string(options_.max_restarts) + ")");
      return outcome.exit_code;
    }
    say("restarting all workers (restart " + std::to_string(attempt + 1) + " of " +
        std::to_string(options_.max_restarts) + ")");
  }
}

}  // namespace shardkit::run
