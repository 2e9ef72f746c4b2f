// shardkit-train's entry point: the run builder's plan -> --help, --print_config, a dry run or a
// Trainer; errors -> exit codes.
#include "shardkit/train.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>

#include "shardkit/error.hpp"
#include "shardkit/error_text.hpp"
#include "shardkit/json_text.hpp"
#include "shardkit/logging.hpp"
#include "accelerate_env.hpp"
#include "device.hpp"
#include "dataset_preview.hpp"
#include "dry_run.hpp"
#include "preemption.hpp"
#include "run_builder.hpp"
#include "trainer.hpp"

namespace shardkit {
namespace {

/// `multi_process` is set once the runtime is known (errors before that leave normally).
int run(int argc, char** argv, bool& multi_process) {
  Runtime runtime = Runtime::from_environment();
  multi_process = runtime.multi_process();
  set_log_rank(runtime.rank, runtime.world_size);
  auto plan = train::build_run({argv + 1, argv + argc}, runtime);
  if (plan.help) {
    std::cout << *plan.help;
    return 0;
  }
  if (plan.options.print_config) {
    if (runtime.is_main())
      std::cout << "# shardkit-train: the resolved configuration; after '#', where each value came from.\n"
                   "# Nothing was trained and no folder was created.\n"
                << plan.provenance.text(plan.config) << std::flush;
    return 0;
  }
  set_info_ranks(runtime.rank, plan.options.log_all_ranks);
  for (const auto& line : plan.infos) logger()->info("{}", line);
  for (const auto& line : plan.warnings) logger()->warn("{}", line);

  // The device and its transport are settled before any rank joins the run.
  runtime.device = train::resolve_device(plan.options.policy_device, runtime.local_rank);
  if (runtime.multi_process()) train::check_comm_device(plan.selection.comm, runtime.device);

  if (const auto code = train::preview_dataset(plan, runtime)) return *code;
  if (plan.dry_run) return train::print_memory_plan(plan.config, *plan.registry, runtime, plan.selection, plan.mesh);

  // As lerobot-train: accelerate's variables must not seem to configure what the flags decide.
  const auto accelerate_warning = train::check_accelerate_env([](const char* name) { return std::getenv(name); });
  if (!accelerate_warning.empty() && runtime.is_main()) logger()->warn("{}", accelerate_warning);

  train::install_preemption_handler();
  train::Trainer trainer(std::move(plan.config), *plan.registry, runtime, plan.selection, plan.mesh, plan.resume_dir,
                         std::move(plan.provenance));
  return train::exit_code_after_stop(trainer.run());
}

}  // namespace

/// torchelastic's error-file contract: the launcher shows this message for the failed rank.
void write_error_file(const std::string& message) {
  const char* path = std::getenv("TORCHELASTIC_ERROR_FILE");
  if (!path || !*path) return;
  std::ofstream out(path, std::ios::trunc);
  out << "{\"message\": {\"message\": \"" << json_escape(message) << "\", \"extraInfo\": {\"py_callstack\": \"\", "
      << "\"timestamp\": \"" << std::time(nullptr) << "\"}}}\n";
}

/// After an error in a multi-process run, peers may be gone and tearing down process
/// groups can block on them: report and leave without running destructors.
[[noreturn]] void leave(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}

/// Prints the error and returns (or, in a multi-process run, leaves with) `code`.
int fail(int code, const std::string& message, bool multi_process) {
  const std::string text = (code == 2 ? "configuration error: " : "") + message;
  std::cerr << "shardkit-train: " << (code == 2 ? "" : "error: ") << text << "\n";
  write_error_file(text);
  train::undo_failed_start();  // before leave(), which runs no destructors
  if (multi_process) leave(code);
  return code;
}

// Exit codes (docs/cli.md#exit-codes): the class of the error decides, never where it was found
// (before the run was built, while loading, or while training):
//   2, a configuration error: the command asks for what cannot be done as asked, or names what is
//      not there or not of the kind expected (ConfigError), or a plugin that cannot be loaded
//      (PluginError);
//   1, a runtime failure: a file that is there but damaged or unreadable (FormatError), a failure
//      while running (RuntimeError), any other error.
int train_main(int argc, char** argv) {
  bool multi = false;
  try {
    return run(argc, argv, multi);
  } catch (const ConfigError& e) {
    return fail(2, e.what(), multi);
  } catch (const PluginError& e) {
    return fail(2, e.what(), multi);
  } catch (const Error& e) {
    return fail(1, e.what(), multi);
  } catch (const std::exception& e) {
    // An error nothing above expected (LibTorch's own carry a stack trace): one line, with
    // the whole text on request.
    const bool full = std::getenv("SHARDKIT_FULL_ERRORS") != nullptr;
    return fail(1, full ? std::string(e.what()) : one_line_message(e) + " (SHARDKIT_FULL_ERRORS=1 prints the full error)",
                multi);
  }
}

}  // namespace shardkit
