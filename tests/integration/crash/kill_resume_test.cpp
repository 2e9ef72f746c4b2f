// Crash-consistent saves: training is SIGKILLed at random moments, mostly inside checkpoint
// saves (one rank, every rank, or the launcher), over 200 times across checkpoint formats and
// backends, and resumed with --resume=true after each kill. Every resume must start from the
// newest complete checkpoint without any cleanup by hand, and each chain, once left to finish,
// must log exactly the losses of an uninterrupted run.
//
// SHARDKIT_KILLS_PER_CASE (default 23: 12 cases x 23 = 276 kills, 69 of them with
// --checkpoint.async_mode=async) changes the number of kills.
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <thread>

#include <catch2/catch.hpp>

#include "../distributed/launch.hpp"
#include "kill_process.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

constexpr int kSteps = 200;  // more than a chain of kills reaches, so that kills land in training

int kills_per_case() {
  const char* env = std::getenv("SHARDKIT_KILLS_PER_CASE");
  return env != nullptr ? std::max(1, std::atoi(env)) : 23;
}

struct Case {
  std::string backend, format;
  int nproc;
  bool async = false;  ///< --checkpoint.async_mode=async: kills land in background writes
};

std::vector<std::string> run_argv(const std::string& out, const Case& c, bool resume) {
  const auto& [backend, format, nproc, async] = c;
  std::vector<std::string> argv = {bin("shardkit-run"), "--nproc-per-node=" + std::to_string(nproc), "--master-port=0",
                                   "--grace-period-s=3", bin("shardkit-train")};
  for (const auto& a : tiny_run(out, {"--steps=" + std::to_string(kSteps), "--save_freq=1", "--batch_size=4",
                                      "--checkpoint_format=" + format, "--distributed_backend=" + backend,
                                      "--distributed.timeout_s=30",
                                      std::string("--checkpoint.async_mode=") + (async ? "async" : "disabled")}))
    argv.push_back(a);
  if (resume) argv.push_back("--resume=true");
  return argv;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Whether every file its manifest lists exists with the listed size (read independently of
/// shardkit's own check, with a pattern over the manifest's text).
bool complete(const fs::path& checkpoint) {
  const auto manifest = read_file(checkpoint / "manifest.json");
  if (manifest.empty() || manifest.back() != '\n') return false;
  static const std::regex entry("\"([^\"]+)\":\\{\"size\":([0-9]+)");
  int files = 0;
  for (std::sregex_iterator it(manifest.begin(), manifest.end(), entry), end; it != end; ++it, ++files) {
    std::error_code ec;
    const auto size = fs::file_size(checkpoint / (*it)[1].str(), ec);
    if (ec || size != std::stoull((*it)[2].str())) return false;
  }
  return files > 0;
}

/// The step of the newest complete checkpoint under <out>/checkpoints, or -1.
long newest_complete(const std::string& out) {
  long best = -1;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(out) / "checkpoints", ec)) {
    const auto name = e.path().filename().string();
    if (e.is_symlink() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stol(name) > best && complete(e.path())) best = std::stol(name);
  }
  return best;
}

/// Whether a save has its staging folder open, written to since `since` (a staging folder left
/// by an earlier, killed attempt is older).
bool saving(const std::string& out, fs::file_time_type since) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(out) / "checkpoints", ec))
    if (e.path().filename().string().rfind(".tmp-", 0) == 0 && fs::last_write_time(e.path(), ec) >= since) return true;
  return false;
}

/// The step of "resumed from ... at step N" in a log, or -1.
long resumed_step(const std::string& log) {
  static const std::regex line("resumed from .* at step ([0-9]+)");
  std::smatch m;
  return std::regex_search(log, m, line) ? std::stol(m[1].str()) : -1;
}

void run_chain(const Case& c, std::uint32_t seed) {
  TempDir dir("sk-kill-" + c.backend + "-" + c.format);
  const auto ref = (dir / "ref");
  const auto ref_pid = spawn(run_argv(ref, c, false), (dir / "ref.log"));
  const int ref_code = wait_exit(ref_pid, 600);
  INFO(read_file(dir / "ref.log"));
  REQUIRE(ref_code == 0);
  const auto want = losses(ref);
  REQUIRE(want.size() == static_cast<std::size_t>(kSteps));

  std::mt19937 rng(seed);
  const auto uniform = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
  const char* targets[] = {"the launcher", "every rank", "one rank"};
  int kills = 0, checked_resumes = 0, chains = 0;
  // A chain: a fresh run killed and resumed until it has taken its share of kills or finished
  // between two kills (fast runs do); then it must end with the uninterrupted run's losses.
  while (kills < kills_per_case()) {
    const auto out = dir / ("run" + std::to_string(chains++));
    bool finished_alone = false;
    for (int attempt = 0; kills < kills_per_case(); ++attempt) {
      const bool resume = attempt > 0;
      const long expected = newest_complete(out);
      const auto log = out + ".attempt-" + std::to_string(attempt) + ".log";
      const auto spawned_at = fs::file_time_type::clock::now();
      const auto pid = spawn(run_argv(out, c, resume), log);
      const auto started = std::chrono::steady_clock::now();
      const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
      int exit_code = -1;  // once reaped
      const auto finished = [&] {
        if (exit_code == -1) exit_code = wait_exit(pid, 0);
        return exit_code != -1;
      };
      // The first run is killed only once it has a complete checkpoint to resume from.
      while (!resume && newest_complete(out) < 1 && elapsed() < 120 && !finished())
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      // Mostly inside a save (a random moment after its staging folder appears), else anywhere.
      if (uniform(0, 1) < 0.75) {
        while (!saving(out, spawned_at) && elapsed() < 120 && !finished())
          std::this_thread::sleep_for(std::chrono::microseconds(500));
        std::this_thread::sleep_for(std::chrono::duration<double>(uniform(0, 0.02)));
      } else {
        std::this_thread::sleep_for(std::chrono::duration<double>(uniform(0, 1.5)));  // start-up, load, steps
      }
      const int target = static_cast<int>(rng() % 3);
      // Ranks are killed once the launcher has started them (it may still be starting up).
      auto workers = children_of(pid);
      while (target != 0 && static_cast<int>(workers.size()) < c.nproc && elapsed() < 120 && !finished()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        workers = children_of(pid);
      }
      if (target == 0) {
        ::kill(pid, SIGKILL);
      } else if (!workers.empty()) {
        if (target == 1) {
          for (const auto w : workers) ::kill(w, SIGKILL);
        } else {
          ::kill(workers[rng() % workers.size()], SIGKILL);
        }
      }
      const int code = exit_code != -1 ? exit_code : wait_exit(pid, 120);
      INFO(c.backend << "/" << c.format << " " << out << " attempt " << attempt << ", killed " << targets[target]
                     << "\n" << read_file(log));
      REQUIRE(code != -1);  // the launcher ended after the kill: no hang
      REQUIRE(wait_gone(workers, 30));
      const auto step = resumed_step(read_file(log));
      if (resume && step >= 0) {
        CHECK(step == expected);
        ++checked_resumes;
      }
      if (code == 0) {  // it finished before the kill: nothing was killed
        finished_alone = true;
        break;
      }
      ++kills;
    }
    if (!finished_alone && newest_complete(out) < kSteps) {
      // Left alone, the last resume finishes the run (unless a kill hit it after its last save).
      const long expected = newest_complete(out);
      const auto log = out + ".final.log";
      const auto pid = spawn(run_argv(out, c, true), log);
      const int code = wait_exit(pid, 600);
      INFO(c.backend << "/" << c.format << " final resume\n" << read_file(log));
      REQUIRE(code == 0);
      CHECK(resumed_step(read_file(log)) == expected);
    }
    CHECK(losses(out) == want);  // every chain ends with the losses of the uninterrupted run
  }
  CHECK(kills == kills_per_case());
  WARN(c.backend << "/" << c.format << ": " << kills << " kills in " << chains << " chain(s), " << checked_resumes
                 << " resumes seen choosing their checkpoint, all the newest complete one");
}

}  // namespace

TEST_CASE("kills during saves never cost a resume: one process", "[kill]") {
  const Case cases[] = {{"single", "safetensors", 1}, {"single", "dcp", 1}, {"single", "safetensors_dcp", 1}};
  std::uint32_t seed = 100;
  for (const auto& c : cases) run_chain(c, seed++);
}

TEST_CASE("kills during saves never cost a resume: ddp on 2 processes", "[kill]") {
  const Case cases[] = {{"ddp", "safetensors", 2}, {"ddp", "dcp", 2}, {"ddp", "safetensors_dcp", 2}};
  std::uint32_t seed = 200;
  for (const auto& c : cases) run_chain(c, seed++);
}

TEST_CASE("kills during saves never cost a resume: fsdp on 2 processes", "[kill]") {
  const Case cases[] = {{"fsdp", "safetensors", 2}, {"fsdp", "dcp", 2}, {"fsdp", "safetensors_dcp", 2}};
  std::uint32_t seed = 300;
  for (const auto& c : cases) run_chain(c, seed++);
}

TEST_CASE("kills during asynchronous saves never cost a resume", "[kill]") {
  // The background writer's files appear while training goes on; every format, one process and both 2-rank backends.
  const Case cases[] = {{"single", "dcp", 1, true}, {"ddp", "safetensors", 2, true}, {"fsdp", "safetensors_dcp", 2, true}};
  std::uint32_t seed = 400;
  for (const auto& c : cases) run_chain(c, seed++);
}
