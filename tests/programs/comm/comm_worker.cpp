// comm_worker: loads the gloo comm plugin, joins the run from the environment, runs a scenario.
//
//   RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29511
//   SHARDKIT_PLUGIN_PATH=build/lib/shardkit/plugins comm_worker collectives [--timeout=S]
//
// Prints "comm_worker rank R: OK <scenario>" and exits 0, or prints the error and exits 1.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include <shardkit/comm.hpp>
#include <shardkit/loader.hpp>
#include <shardkit/logging.hpp>
#include <shardkit/runtime.hpp>

#include "scenarios.hpp"

namespace {

constexpr const char* kUsage =
    "usage: comm_worker init|collectives|hang|exit_early|host_store [--timeout=S] [--port=P]\n"
    "                   [--plugin_path=DIR] [--comm=NAME] [--debug]\n";

struct Command {
  comm_worker::Args args;
  shardkit::PluginSearch search;
  std::string comm = "gloo";
};

Command parse(int argc, char** argv) {
  Command command;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--timeout=", 0) == 0) command.args.timeout_s = std::stod(arg.substr(10));
    else if (arg.rfind("--port=", 0) == 0) command.args.port = std::stoi(arg.substr(7));
    else if (arg.rfind("--plugin_path=", 0) == 0) command.search.dirs.push_back(arg.substr(14));
    else if (arg.rfind("--comm=", 0) == 0) command.comm = arg.substr(7);
    else if (arg == "--debug") command.args.debug = true;
    else if (arg.rfind("--", 0) != 0 && command.args.scenario.empty()) command.args.scenario = arg;
    else throw std::invalid_argument("unknown argument '" + arg + "'\n" + kUsage);
  }
  if (command.args.scenario.empty()) throw std::invalid_argument(kUsage);
  return command;
}

}  // namespace

int main(int argc, char** argv) {
  int rank = -1;
  const auto start = std::chrono::steady_clock::now();
  try {
    const auto command = parse(argc, argv);
    const auto& args = command.args;
    const auto runtime = shardkit::Runtime::from_environment();
    rank = runtime.rank;
    shardkit::set_log_rank(runtime.rank, runtime.world_size);
    if (args.debug) shardkit::logger()->set_level(spdlog::level::debug);

    shardkit::Registry registry;
    registry.discover(command.search);
    shardkit::PluginContext context;
    context.logger = shardkit::logger();
    context.runtime = &runtime;
    auto comm = registry.create_as<shardkit::Comm>("comm", command.comm, context);

    if (args.scenario == "host_store") {
      comm_worker::host_store(*comm, args);
    } else {
      comm->init(shardkit::CommInit::from_runtime(runtime, args.timeout_s));
      if (args.scenario == "init") comm->world()->barrier();
      else if (args.scenario == "collectives") comm_worker::collectives(*comm);
      else if (args.scenario == "hang") comm_worker::hang(*comm, args);
      else if (args.scenario == "exit_early") comm_worker::exit_early(*comm);
      else throw std::invalid_argument("unknown scenario '" + args.scenario + "'\n" + kUsage);
    }
    std::cout << "comm_worker rank " << rank << ": OK " << args.scenario << std::endl;
    return 0;
  } catch (const std::exception& e) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "comm_worker rank " << rank << ": error after " << seconds << " s: " << e.what()
              << std::endl;
    return 1;
  }
}
