// The CheckpointManager's asynchronous saves (--checkpoint.async_mode=async): the host copy,
// the background writer, and what a failed background save does to the run.
#include <filesystem>

#include "checkpoint_manager.hpp"
#include "elapsed.hpp"
#include "rank_agreement.hpp"
#include "shardkit/error.hpp"
#include "shardkit/logging.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;

namespace {
/// What a rank says when only another rank's writer knew why the save failed.
constexpr const char* kOtherRankFailed = "another rank's writer failed (its log names the reason).";
}  // namespace

void CheckpointManager::start_background_save(const std::string& root, const std::string& name,
                                              const ShardedState& state, std::map<std::string, std::string> files,
                                              std::chrono::steady_clock::time_point started, double waited) {
  // The step's state as it is now: training may change the live tensors (and draw random
  // numbers) as soon as this returns.
  auto staged = staging_.copy(state);
  auto rng = current_rng_state();
  const auto blocked = seconds_since(started);
  if (runtime_.is_main())
    logger()->info("checkpoint {}: state copied to host buffers ({}, {} bytes on this rank), training blocked {:.3f} s{}; "
                   "writing it in the background",
                   (fs::path(root) / name).string(), format_bytes(staging_.bytes()), staging_.bytes(), blocked,
                   waited >= 0.001 ? fmt::format(" ({:.3f} s of it waiting for the previous save)", waited) : "");
  writer_.start([this, root, name, staged = std::move(staged), files = std::move(files), rng] {
    const auto began = std::chrono::steady_clock::now();
    const auto dir = background_checkpointer_->save(root, name, staged, files, rng);
    published(dir, fmt::format("written in the background in {:.2f} s", seconds_since(began)));
  });
}

std::string CheckpointManager::background_failure_message(const std::string& failure, bool stopping) const {
  return "the background save of a checkpoint failed: " + failure +
         (stopping ? " Training stopped (--checkpoint.on_error=stop; --checkpoint.on_error=warn trains on)."
                   : " Training goes on (--checkpoint.on_error=warn); the next save tries again.");
}

void CheckpointManager::settle_background_save() {
  std::string failure;
  if (writer_.busy()) {
    if (!writer_.ended() && runtime_.is_main()) logger()->info("waiting for the checkpoint being written in the background");
    failure = writer_.wait();
  }
  // Every rank calls this at the same step (a save, the end, a stop), whether or not its writer
  // was still busy (the stop check may have joined it already): the ranks agree here, so that
  // one rank's failure stops them all even when the writers did not see the same one.
  const bool any = stop_reasons_of_any_rank(mesh_.world(), {0, !failure.empty()}).failed_save;
  if (!any || warned(failure)) return;
  throw RuntimeError(background_failure_message(failure.empty() ? kOtherRankFailed : failure, true));
}

bool CheckpointManager::warned(const std::string& failure) const {
  if (options_.checkpoint_on_error != "warn") return false;
  if (!failure.empty()) logger()->warn("{}", background_failure_message(failure, false));
  return true;
}

bool CheckpointManager::background_save_failed() {
  if (!writer_.busy() || !writer_.ended()) return false;
  const auto failure = writer_.wait();
  if (failure.empty() || warned(failure)) return false;
  failure_ = failure;
  return true;
}

void CheckpointManager::stop_after_failed_save() {
  // A rank whose writer had not ended when another's had failed: its writer saw the same
  // failure (the writers exchange every stage's outcome) and ends now.
  if (failure_.empty()) failure_ = writer_.wait();
  if (failure_.empty()) failure_ = kOtherRankFailed;
  throw RuntimeError(background_failure_message(failure_, true));
}

void CheckpointManager::finish() {
  if (background_checkpointer_) settle_background_save();
}

}  // namespace shardkit::train
