// shardkit-run's worker contract: torchrun's environment per rank, prefixed output, log files.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <sstream>

#include "launcher_test_support.hpp"

using namespace shardkit::test;
using namespace shardkit::test::launcher;

namespace {

/// A worker that writes NAME=VALUE lines of its launcher variables to env_<RANK>.
std::string env_dump_script(const TempDir& dir) {
  return write_script(dir, "dump_env.sh",
                      "out=\"$(dirname \"$0\")/env_$RANK\"\n"
                      "for v in RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE GROUP_RANK "
                      "GROUP_WORLD_SIZE ROLE_RANK ROLE_WORLD_SIZE ROLE_NAME MASTER_ADDR MASTER_PORT "
                      "OMP_NUM_THREADS TORCHELASTIC_RESTART_COUNT TORCHELASTIC_MAX_RESTARTS "
                      "TORCHELASTIC_RUN_ID TORCHELASTIC_USE_AGENT_STORE TORCHELASTIC_ERROR_FILE; do\n"
                      "  eval \"echo $v=\\${$v-UNSET}\"\n"
                      "done > \"$out.tmp\"\n"
                      "mv \"$out.tmp\" \"$out\"\n");
}

std::map<std::string, std::string> read_env(const std::string& path) {
  std::map<std::string, std::string> env;
  std::istringstream in(slurp(path));
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

}  // namespace

TEST_CASE("each worker gets torchrun's environment for its rank", "[launcher][env]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-env");
  const auto script = env_dump_script(dir);
  const auto r = run_command("env -u OMP_NUM_THREADS " + shell_quote(launcher_path()) +
                             " --nproc-per-node=3 --master-port=0 --grace-period-s=2 --rdzv-id=job7 " +
                             shell_quote(script));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "OMP_NUM_THREADS=1"));  // the notice, printed once
  CHECK(r.output.find("OMP_NUM_THREADS=1") == r.output.rfind("OMP_NUM_THREADS=1"));
  std::string port, error_files;
  for (int rank = 0; rank < 3; ++rank) {
    auto env = read_env(dir / ("env_" + std::to_string(rank)));
    INFO("rank " << rank);
    CHECK(env["RANK"] == std::to_string(rank));
    CHECK(env["WORLD_SIZE"] == "3");
    CHECK(env["LOCAL_RANK"] == std::to_string(rank));
    CHECK(env["LOCAL_WORLD_SIZE"] == "3");
    CHECK(env["GROUP_RANK"] == "0");
    CHECK(env["GROUP_WORLD_SIZE"] == "1");
    CHECK(env["ROLE_RANK"] == std::to_string(rank));
    CHECK(env["ROLE_WORLD_SIZE"] == "3");
    CHECK(env["ROLE_NAME"] == "default");
    CHECK(env["MASTER_ADDR"] == "127.0.0.1");
    CHECK(env["OMP_NUM_THREADS"] == "1");
    CHECK(env["TORCHELASTIC_RESTART_COUNT"] == "0");
    CHECK(env["TORCHELASTIC_MAX_RESTARTS"] == "0");
    CHECK(env["TORCHELASTIC_RUN_ID"] == "job7");
    CHECK(env["TORCHELASTIC_USE_AGENT_STORE"] == "True");
    // The store's real port, not the 0 we asked for; the same for every rank.
    CHECK(env["MASTER_PORT"] != "0");
    CHECK(std::stoi(env["MASTER_PORT"]) > 0);
    if (rank == 0) port = env["MASTER_PORT"];
    CHECK(env["MASTER_PORT"] == port);
    // One error file per rank, in a folder the launcher removes at the end.
    CHECK(contains(env["TORCHELASTIC_ERROR_FILE"], "rank_" + std::to_string(rank)));
    CHECK_FALSE(contains(error_files, env["TORCHELASTIC_ERROR_FILE"] + ";"));
    error_files += env["TORCHELASTIC_ERROR_FILE"] + ";";
    CHECK_FALSE(std::filesystem::exists(
        std::filesystem::path(env["TORCHELASTIC_ERROR_FILE"]).parent_path()));
  }
}

TEST_CASE("MASTER_PORT is where the launcher's store listens while workers run", "[launcher][env]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-port");
  const auto script = write_script(
      dir, "connect.sh",
      python() + " -c 'import os, socket; socket.create_connection((os.environ[\"MASTER_ADDR\"], "
      "int(os.environ[\"MASTER_PORT\"])), timeout=10).close(); print(\"connected\")'");
  const auto r = run_launcher("--nproc-per-node=1 --master-port=0 " + shell_quote(script));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "[rank0]: connected"));
}

TEST_CASE("a user's OMP_NUM_THREADS is kept and no notice is printed", "[launcher][env]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-omp");
  const auto script = env_dump_script(dir);
  const auto r = run_command("OMP_NUM_THREADS=7 " + shell_quote(launcher_path()) +
                             " --nproc-per-node=2 --master-port=0 " + shell_quote(script));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(contains(r.output, "OMP_NUM_THREADS=1"));
  CHECK(read_env(dir / "env_0")["OMP_NUM_THREADS"] == "7");
  CHECK(read_env(dir / "env_1")["OMP_NUM_THREADS"] == "7");
}

TEST_CASE("flags work with underscores, spaces and a -- before the program", "[launcher][env]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-spellings");
  const auto script = env_dump_script(dir);
  const auto r = run_launcher("--nproc_per_node 2 --master_port 0 --max_restarts=0 "
                              "--grace_period_s 1 --rdzv_id run9 --no_python -- " +
                              shell_quote(script));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(read_env(dir / "env_1")["WORLD_SIZE"] == "2");
  CHECK(read_env(dir / "env_1")["TORCHELASTIC_RUN_ID"] == "run9");
  CHECK_FALSE(std::filesystem::exists(dir / "env_2"));
}

TEST_CASE("--standalone runs one node on a free local port", "[launcher][env]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-standalone");
  const auto script = env_dump_script(dir);
  const auto r = run_launcher("--standalone --nproc-per-node=2 " + shell_quote(script));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto env = read_env(dir / "env_1");
  CHECK(env.at("MASTER_ADDR") == "127.0.0.1");
  CHECK(env.at("MASTER_PORT") != "0");
  CHECK(env.at("TORCHELASTIC_RUN_ID") != "none");
}

namespace {

/// The CPUs of a Cpus_allowed_list value ("0-3,8").
std::set<int> parse_cpu_list(const std::string& text) {
  std::set<int> cpus;
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    const auto dash = part.find('-');
    const int first = std::stoi(part.substr(0, dash));
    const int last = dash == std::string::npos ? first : std::stoi(part.substr(dash + 1));
    for (int cpu = first; cpu <= last; ++cpu) cpus.insert(cpu);
  }
  return cpus;
}

/// This process's CPUs: what the launcher it starts may use.
std::set<int> own_cpus() {
  std::istringstream in(slurp("/proc/self/status"));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Cpus_allowed_list:", 0) == 0) return parse_cpu_list(line.substr(line.find_last_of(" \t") + 1));
  return {};
}

}  // namespace

TEST_CASE("--cpu-bind=cores pins each local rank to its own share of the CPUs", "[launcher][env]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-cpu-bind");
  const auto script = write_script(dir, "cpus.sh",
                                   "grep Cpus_allowed_list /proc/self/status | awk '{print $2}' "
                                   "> \"$(dirname \"$0\")/cpus_$RANK\"\n");
  const auto all = own_cpus();
  REQUIRE_FALSE(all.empty());
  const int ranks = 2;
  const auto r = run_launcher("--nproc-per-node=2 --master-port=0 --cpu-bind=cores " + shell_quote(script));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "--cpu-bind=cores: local rank 0 on CPU "));
  std::set<int> seen;
  for (int rank = 0; rank < ranks; ++rank) {
    INFO("rank " << rank);
    const auto mine = parse_cpu_list(slurp(dir / ("cpus_" + std::to_string(rank))));
    REQUIRE_FALSE(mine.empty());
    for (const int cpu : mine) CHECK(all.count(cpu) == 1);
    if (all.size() >= static_cast<std::size_t>(ranks)) {  // disjoint shares of sizes differing by at most 1
      for (const int cpu : mine) CHECK(seen.count(cpu) == 0);
      CHECK(mine.size() >= all.size() / ranks);
      CHECK(mine.size() <= (all.size() + ranks - 1) / ranks);
    }
    seen.insert(mine.begin(), mine.end());
  }
  if (all.size() >= static_cast<std::size_t>(ranks)) CHECK(seen == all);

  // Without the flag every rank may run anywhere the launcher may.
  const auto plain = run_launcher("--nproc-per-node=2 --master-port=0 " + shell_quote(script));
  REQUIRE(plain.exit_code == 0);
  CHECK(parse_cpu_list(slurp(dir / "cpus_1")) == all);

  const auto bad = run_launcher("--nproc-per-node=2 --cpu-bind=sockets " + shell_quote(script));
  CHECK(bad.exit_code != 0);
  CHECK(contains(bad.output, "--cpu-bind=sockets: expected cores"));
}

TEST_CASE("worker output is relayed line by line with a rank prefix", "[launcher][output]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-output");
  const auto script = write_script(dir, "talk.sh",
                                   "echo \"hello from $RANK\"\n"
                                   "echo \"oops from $RANK\" >&2\n"
                                   "printf 'no newline %s' \"$RANK\"\n");
  const std::string flags = " --nproc-per-node=2 --master-port=0 " + shell_quote(script);
  // stdout alone: only the stdout lines, each prefixed, the unterminated one flushed at EOF.
  const auto out = run_command("(" + shell_quote(launcher_path()) + flags + " 2>/dev/null)");
  INFO(out.output);
  REQUIRE(out.exit_code == 0);
  CHECK(contains(out.output, "[rank0]: hello from 0\n"));
  CHECK(contains(out.output, "[rank1]: hello from 1\n"));
  CHECK(contains(out.output, "[rank0]: no newline 0\n"));
  CHECK(contains(out.output, "[rank1]: no newline 1\n"));
  CHECK_FALSE(contains(out.output, "oops"));
  // stderr alone: the stderr lines.
  const auto err = run_command("(" + shell_quote(launcher_path()) + flags + " >/dev/null)");
  INFO(err.output);
  CHECK(contains(err.output, "[rank0]: oops from 0\n"));
  CHECK(contains(err.output, "[rank1]: oops from 1\n"));
  CHECK_FALSE(contains(err.output, "hello"));
}

TEST_CASE("--log-dir keeps each rank's raw lines per attempt", "[launcher][output]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-logs");
  const auto script = write_script(dir, "talk.sh",
                                   "echo \"hello from $RANK\"\n"
                                   "echo \"oops from $RANK\" >&2\n");
  const auto r = run_launcher("--nproc-per-node=2 --master-port=0 --log-dir " +
                              shell_quote(dir / "logs") + " " + shell_quote(script));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (int rank = 0; rank < 2; ++rank) {
    const auto log = slurp(dir / ("logs/attempt_0/rank_" + std::to_string(rank) + ".log"));
    INFO(log);
    CHECK(contains(log, "hello from " + std::to_string(rank) + "\n"));
    CHECK(contains(log, "oops from " + std::to_string(rank) + "\n"));
    CHECK_FALSE(contains(log, "[rank"));
  }
}

TEST_CASE("--nproc-per-node=auto and cpu without a visible GPU start one worker per CPU",
          "[launcher][env]") {
  SHARDKIT_REQUIRE_GLOO();
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  REQUIRE(cpus > 0);
  for (const char* value : {"auto", "cpu"}) {
    TempDir dir("shardkit-run-auto");
    const auto script = write_script(dir, "worker.sh",
                                     "echo \"$LOCAL_WORLD_SIZE $WORLD_SIZE\" > \"$(dirname \"$0\")/rank_$RANK\"\n");
    // An empty CUDA_VISIBLE_DEVICES hides every GPU, so the count is the same on any machine.
    const auto r = run_command("CUDA_VISIBLE_DEVICES= " + shell_quote(launcher_path()) +
                               " --nproc-per-node=" + value + " --master-port=0 " + shell_quote(script));
    INFO(value << "\n" << r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.output, "--nproc-per-node=" + std::string(value) + ": starting " +
                                 std::to_string(cpus) + " worker(s) on this node (" + std::to_string(cpus) +
                                 " CPU"));
    const std::string expected = std::to_string(cpus) + " " + std::to_string(cpus) + "\n";
    for (long rank = 0; rank < cpus; ++rank) CHECK(slurp(dir / ("rank_" + std::to_string(rank))) == expected);
    CHECK_FALSE(std::filesystem::exists(dir / ("rank_" + std::to_string(cpus))));
  }
}

TEST_CASE("accelerate launch's flags mean what torchrun's do", "[launcher][env][accelerate]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-accelerate");
  const auto script = env_dump_script(dir);
  // --num_processes is accelerate's total over --num_machines: 2 per machine, this one of 1.
  const auto r = run_command(shell_quote(launcher_path()) +
                             " --multi_gpu --num_processes=2 --num_machines=1 --machine_rank=0 "
                             "--main_process_ip=127.0.0.1 --main_process_port=0 --num_cpu_threads_per_process=3 "
                             "--mixed_precision=no --no_python --grace-period-s=2 " + shell_quote(script));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (int rank = 0; rank < 2; ++rank) {
    auto env = read_env(dir / ("env_" + std::to_string(rank)));
    INFO("rank " << rank);
    CHECK(env["RANK"] == std::to_string(rank));
    CHECK(env["WORLD_SIZE"] == "2");
    CHECK(env["LOCAL_WORLD_SIZE"] == "2");
    CHECK(env["GROUP_WORLD_SIZE"] == "1");
    CHECK(env["MASTER_ADDR"] == "127.0.0.1");
    CHECK(env["OMP_NUM_THREADS"] == "3");
  }
}
