// Parsing and validation of shardkit-run's flags (torchrun spellings, dashes or underscores).
#include "launch_options.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>

#include "shardkit/config.hpp"
#include "shardkit/error.hpp"
#include "local_devices.hpp"

namespace shardkit::run {
namespace {

constexpr const char* kUsage =
    "usage: shardkit-run [launcher flags] [--] PROGRAM [ARGS...]\n"
    "Starts --nproc-per-node copies of PROGRAM on this node with torchrun's environment\n"
    "(RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT, ...), hosts or joins the\n"
    "rendezvous store, prefixes each output line with [rank<R>]:, and stops every worker\n"
    "when one fails. Flags take --flag=value or --flag value, with dashes or underscores.\n"
    "\n"
    "  --nproc-per-node=N      workers on this node (default 1); also auto (one per visible\n"
    "                          GPU, else one per CPU core), cpu (per core), gpu (per GPU)\n"
    "  --nnodes=N              nodes taking part (default 1; MIN:MAX only with MIN == MAX)\n"
    "  --node-rank=K           this node's rank, 0 <= K < nnodes (default 0)\n"
    "  --master-addr=HOST      node 0's address (default 127.0.0.1)\n"
    "  --master-port=PORT      store port on node 0 (default 29500; 0 = any free port)\n"
    "  --rdzv-endpoint=HOST[:PORT]  overrides --master-addr/--master-port (port default 29400)\n"
    "  --rdzv-backend=c10d|static   accepted; both mean the launcher-hosted store\n"
    "  --rdzv-id=ID            run id, exported as TORCHELASTIC_RUN_ID (default none)\n"
    "  --standalone            one node on localhost with a free port\n"
    "  --max-restarts=N        restarts of the whole worker group after a failure (default 0)\n"
    "  --log-dir=DIR           also write each rank's output to DIR/attempt_<n>/rank_<R>.log\n"
    "  --timeout-s=SECONDS     rendezvous and store timeout (default 900)\n"
    "  --grace-period-s=SECONDS  between SIGTERM and SIGKILL when stopping workers (default 30)\n"
    "  --monitor-interval=SECONDS  how often to check workers (default 0.1)\n"
    "  --no-python             accepted: PROGRAM is always executed as is\n"
    "  --cpu-bind=cores|none   cores: pin each local rank to its own contiguous share of the\n"
    "                          CPUs the launcher may use, as srun --cpu-bind=cores (default none)\n"
    "accelerate launch's spellings of the same (not mixed with torchrun's for one thing):\n"
    "  --num-processes=N       processes in all, over --num-machines (default 1)\n"
    "  --num-machines=M, --machine-rank=K, --main-process-ip=HOST, --main-process-port=PORT\n"
    "  --num-cpu-threads-per-process=N  OMP_NUM_THREADS of each worker\n"
    "  --multi-gpu, --cpu, --same-network, --mixed-precision=no  accepted (the program picks\n"
    "                          its device and precision: shardkit-train's --policy.device and\n"
    "                          --accelerator.mixed_precision)\n"
    "  --redirects=..., --tee=...  accepted and ignored (output is always prefixed and relayed)\n"
    "  --help                  this text\n"
    "\n"
    "Exit codes: 0 when every worker exited 0; the exit code of the first worker that failed\n"
    "(after the allowed restarts; 128+N for a worker killed by signal N, 130 for SIGINT);\n"
    "1 when the rendezvous or a worker on another node failed; 2 for a usage error.\n";

/// How a flag takes its value.
enum class Arity { Value, Bool };

const std::map<std::string, Arity>& known_flags() {
  static const std::map<std::string, Arity> flags{
      {"nproc-per-node", Arity::Value}, {"nnodes", Arity::Value},
      {"node-rank", Arity::Value},      {"master-addr", Arity::Value},
      {"master-port", Arity::Value},    {"rdzv-endpoint", Arity::Value},
      {"rdzv-backend", Arity::Value},   {"rdzv-id", Arity::Value},
      {"standalone", Arity::Bool},      {"max-restarts", Arity::Value},
      {"log-dir", Arity::Value},        {"monitor-interval", Arity::Value},
      {"no-python", Arity::Bool},       {"redirects", Arity::Value},
      {"tee", Arity::Value},            {"timeout-s", Arity::Value},
      {"grace-period-s", Arity::Value}, {"help", Arity::Bool},
      // accelerate launch's spellings (apply_accelerate_flags)
      {"num-processes", Arity::Value},  {"num-machines", Arity::Value},
      {"machine-rank", Arity::Value},   {"main-process-ip", Arity::Value},
      {"main-process-port", Arity::Value}, {"num-cpu-threads-per-process", Arity::Value},
      {"cpu-bind", Arity::Value},
      {"multi-gpu", Arity::Bool},       {"cpu", Arity::Bool},
      {"same-network", Arity::Bool},    {"mixed-precision", Arity::Value},
  };
  return flags;
}

std::string suggestion(const std::string& name) {
  std::string best;
  std::size_t best_distance = std::clamp<std::size_t>(name.size() / 3, 2, 4) + 1;
  for (const auto& [known, arity] : known_flags()) {
    const std::size_t d = edit_distance(name, known);
    if (d < best_distance) best_distance = d, best = known;
  }
  return best.empty() ? "" : "; did you mean --" + best + "?";
}

int parse_int(const std::string& flag, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < -1'000'000'000L ||
      value > 1'000'000'000L)
    throw ConfigError(flag + "=" + text + ": expected a whole number");
  return static_cast<int>(value);
}

double parse_seconds(const std::string& flag, const std::string& text, bool allow_zero) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value) || value < 0 ||
      (!allow_zero && value == 0))
    throw ConfigError(flag + "=" + text + ": expected a number of seconds " +
                      (allow_zero ? ">= 0" : "> 0"));
  return value;
}

int parse_port(const std::string& flag, const std::string& text) {
  const int port = parse_int(flag, text);
  if (port < 0 || port > 65535)
    throw ConfigError(flag + "=" + text + ": a port is between 0 and 65535 (0 = any free port)");
  return port;
}

bool parse_bool(const std::string& flag, const std::string& text) {
  if (text == "true" || text == "1" || text == "True") return true;
  if (text == "false" || text == "0" || text == "False") return false;
  throw ConfigError(flag + "=" + text + ": expected true or false (or the bare flag)");
}

/// --nnodes=N or --nnodes=N:N.
int parse_nnodes(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return parse_int("--nnodes", text);
  const int lo = parse_int("--nnodes", text.substr(0, colon));
  const int hi = parse_int("--nnodes", text.substr(colon + 1));
  if (lo != hi)
    throw ConfigError("--nnodes=" + text +
                      ": elastic ranges are not supported; give a fixed number of nodes "
                      "(e.g. --nnodes=" + std::to_string(hi) + ")");
  return lo;
}

/// HOST[:PORT] or [IPV6]:PORT.
void apply_endpoint(const std::string& text, LaunchOptions& options) {
  std::string host = text, port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos)
      throw ConfigError("--rdzv-endpoint=" + text + ": missing ']' after the IPv6 address");
    host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':')
        throw ConfigError("--rdzv-endpoint=" + text + ": expected HOST[:PORT]");
      port = text.substr(close + 2);
    }
  } else if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty()) throw ConfigError("--rdzv-endpoint=" + text + ": the host is empty");
  options.master_addr = host;
  options.master_port = port.empty() ? 29400 : parse_port("--rdzv-endpoint", port);
  options.port_flag = "--rdzv-endpoint";
}

std::string random_run_id() {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 12; ++i) id += hex[rd() % 16];
  return id;
}

/// accelerate launch's flags, rewritten as the torchrun flags that mean the same, in `given`
/// (canonical name -> value). Giving both spellings of one thing is an error naming both.
void apply_accelerate_flags(std::map<std::string, std::string>& given, std::vector<std::string>& notes) {
  const auto take = [&](const char* accelerate, const char* torchrun) {
    const auto it = given.find(accelerate);
    if (it == given.end()) return;
    if (given.count(torchrun))
      throw ConfigError(std::string("--") + accelerate + "=" + it->second + " and --" + torchrun + "=" +
                        given[torchrun] + " set the same thing (accelerate's and torchrun's spelling): give one");
    given[torchrun] = it->second;
    given.erase(it);
  };
  take("num-machines", "nnodes");
  take("machine-rank", "node-rank");
  take("main-process-ip", "master-addr");
  take("main-process-port", "master-port");
  if (const auto it = given.find("num-processes"); it != given.end()) {
    if (given.count("nproc-per-node"))
      throw ConfigError("--num-processes=" + it->second + " and --nproc-per-node=" + given["nproc-per-node"] +
                        " set the same thing (accelerate's total and torchrun's per node): give one");
    const int total = parse_int("--num-processes", it->second);
    const int machines = given.count("nnodes") ? parse_int("--num-machines", given["nnodes"]) : 1;
    if (total < 1 || machines < 1 || total % machines != 0)
      throw ConfigError("--num-processes=" + it->second + " is accelerate's number of processes over all " +
                        std::to_string(machines) + " machine(s) (--num-machines): it must be a positive multiple of it");
    given["nproc-per-node"] = std::to_string(total / machines);
    given.erase(it);
  }
  if (const auto it = given.find("mixed-precision"); it != given.end()) {
    if (it->second != "no")
      throw ConfigError("--mixed-precision=" + it->second + ": the launcher does not set the program's precision; "
                        "give shardkit-train --accelerator.mixed_precision=" + it->second + " instead");
    given.erase(it);
  }
  for (const char* accepted : {"multi-gpu", "cpu", "same-network"})
    if (const auto it = given.find(accepted); it != given.end()) {
      parse_bool(std::string("--") + accepted, it->second);
      notes.push_back(std::string("--") + accepted + " accepted: every worker runs the program as given (its own "
                      "flags choose the device)");
      given.erase(it);
    }
}

}  // namespace

const char* launch_usage() { return kUsage; }

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

LaunchOptions parse_launch_options(const std::vector<std::string>& args) {
  std::map<std::string, std::string> given;  // canonical name -> value, last wins
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h") {
      given["help"] = "true";
      continue;
    }
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      if (arg.size() > 1 && arg[0] == '-')
        throw ConfigError("unknown flag '" + arg + "'; launcher flags start with --");
      break;  // the program
    }
    const auto eq = arg.find('=');
    std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    std::replace(name.begin(), name.end(), '_', '-');
    const auto it = known_flags().find(name);
    if (it == known_flags().end())
      throw ConfigError("unknown flag '" + arg.substr(0, eq) + "'" + suggestion(name));
    if (eq != std::string::npos) {
      given[name] = arg.substr(eq + 1);
    } else if (it->second == Arity::Bool) {
      given[name] = "true";
    } else {
      if (i + 1 >= args.size())
        throw ConfigError("--" + name + " needs a value: --" + name + "=VALUE or --" + name +
                          " VALUE");
      given[name] = args[++i];
    }
  }

  LaunchOptions options;
  apply_accelerate_flags(given, options.ignored_notes);
  options.program.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  auto value = [&](const char* name) -> std::optional<std::string> {
    const auto it = given.find(name);
    if (it == given.end()) return std::nullopt;
    return it->second;
  };
  if (auto v = value("help")) options.help = parse_bool("--help", *v);
  if (options.help) return options;

  if (auto v = value("nproc-per-node")) {
    if (!v->empty() && std::isalpha(static_cast<unsigned char>(v->front()))) {
      const DerivedCount derived = count_from_machine(*v);
      options.nproc_per_node = derived.count;
      options.nproc_note = "--nproc-per-node=" + *v + ": starting " +
                           std::to_string(derived.count) + " worker(s) on this node (" +
                           derived.source + ")";
    } else {
      options.nproc_per_node = parse_int("--nproc-per-node", *v);
    }
    if (options.nproc_per_node < 1)
      throw ConfigError("--nproc-per-node=" + *v + ": need at least one process per node");
  }
  if (auto v = value("nnodes")) {
    options.nnodes = parse_nnodes(*v);
    if (options.nnodes < 1) throw ConfigError("--nnodes=" + *v + ": need at least one node");
  }
  if (auto v = value("node-rank")) {
    options.node_rank = parse_int("--node-rank", *v);
    if (options.node_rank < 0 || options.node_rank >= options.nnodes)
      throw ConfigError("--node-rank=" + *v + ": must be between 0 and --nnodes - 1 = " +
                        std::to_string(options.nnodes - 1));
  }
  if (auto v = value("master-addr")) {
    if (v->empty()) throw ConfigError("--master-addr is empty; give node 0's host name or address");
    options.master_addr = *v;
  }
  if (auto v = value("master-port")) options.master_port = parse_port("--master-port", *v);
  if (auto v = value("rdzv-endpoint"); v && !v->empty()) apply_endpoint(*v, options);
  if (auto v = value("rdzv-backend")) {
    if (*v != "c10d" && *v != "static")
      throw ConfigError("--rdzv-backend=" + *v +
                        ": shardkit-run supports c10d and static (both use the store the "
                        "launcher on node 0 hosts)");
    options.rdzv_backend = *v;
  }
  if (auto v = value("rdzv-id")) options.run_id = *v;
  if (auto v = value("standalone")) options.standalone = parse_bool("--standalone", *v);
  if (auto v = value("max-restarts")) {
    options.max_restarts = parse_int("--max-restarts", *v);
    if (options.max_restarts < 0)
      throw ConfigError("--max-restarts=" + *v + ": must be 0 or more");
  }
  if (auto v = value("log-dir")) options.log_dir = *v;
  if (auto v = value("monitor-interval"))
    options.monitor_interval_s = parse_seconds("--monitor-interval", *v, false);
  if (auto v = value("timeout-s")) options.timeout_s = parse_seconds("--timeout-s", *v, false);
  if (auto v = value("grace-period-s"))
    options.grace_period_s = parse_seconds("--grace-period-s", *v, true);
  if (auto v = value("no-python")) parse_bool("--no-python", *v);
  if (auto v = value("num-cpu-threads-per-process")) {
    options.omp_threads = parse_int("--num-cpu-threads-per-process", *v);
    if (options.omp_threads < 1)
      throw ConfigError("--num-cpu-threads-per-process=" + *v + ": need at least one thread");
  }
  if (auto v = value("cpu-bind")) {
    if (*v != "cores" && *v != "none")
      throw ConfigError("--cpu-bind=" + *v + ": expected cores (each local rank pinned to its own share of the "
                        "CPUs) or none");
    options.cpu_bind = *v == "cores";
  }
  for (const char* name : {"redirects", "tee"})
    if (auto v = value(name))
      options.ignored_notes.push_back(std::string("--") + name + "=" + *v +
                                      " ignored: every line is relayed with a [rank<R>]: prefix "
                                      "(use --log-dir for per-rank files)");

  if (options.standalone) {
    if (options.nnodes != 1)
      throw ConfigError("--standalone runs one node; drop --nnodes=" +
                        std::to_string(options.nnodes) + " or --standalone");
    if (value("rdzv-endpoint") || value("master-addr") || value("master-port"))
      options.ignored_notes.push_back(
          "--standalone: the rendezvous endpoint is localhost with a free port; the given "
          "address/port flags are ignored");
    options.master_addr = "127.0.0.1";
    options.master_port = 0;
    options.port_flag = "--master-port";
    if (!value("rdzv-id")) options.run_id = random_run_id();
  }
  if (options.nnodes > 1 && options.master_port == 0)
    throw ConfigError(options.port_flag + " has port 0 with --nnodes=" +
                      std::to_string(options.nnodes) +
                      ": every node must be given the port node 0 listens on, so pick a fixed "
                      "port");
  if (options.program.empty())
    throw ConfigError("no program to run; usage: shardkit-run [flags] PROGRAM [ARGS...]");
  return options;
}

}  // namespace shardkit::run
