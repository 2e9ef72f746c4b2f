// Fuzz target for the JSON files of a checkpoint's training_state/ that a resume reads:
// training_step.json (with its log window), scheduler_state.json (its last_epoch against the
// step), ema_state.json, scaler_state.json and a PEFT run's base_model.json. Every reader gets
// every input; none crashes or lets anything but shardkit's errors escape, and what the loss
// scaler and the base model record accept they write back and read the same.
//
// Built and run by scripts/fuzz.sh (libFuzzer with ASan and UBSan); the test suite replays the
// committed corpus and the training_state files of tests/data's checkpoints through the same
// function. The input lies in one checkpoint folder under the process's temporary folder.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base_model_record.hpp"
#include "checkpoint_io.hpp"
#include "ema_state_file.hpp"
#include "loss_scaler.hpp"
#include "refuse_or_abort.hpp"
#include "temp_folder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shardkit::train;
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The folder is step 4's; its scheduler_state.json is also the file the other readers read.
  const std::string path =
      shardkit::fuzz::write_temp_file("checkpoints/000004/training_state/scheduler_state.json", text);
  const std::string checkpoint = (shardkit::fuzz::temp_folder() / "checkpoints/000004").string();

  // What CheckpointManager::resume checks, in its order.
  std::int64_t step = 4;
  shardkit::fuzz::refuse_or_abort("read_training_step", [&] {
    step = read_training_step(path).step;
    check_step_matches_folder(checkpoint, step);
  });
  shardkit::fuzz::refuse_or_abort("check_scheduler_matches_step", [&] {
    check_scheduler_matches_step(checkpoint, step, /*strict=*/false);
    check_scheduler_matches_step(checkpoint, step, /*strict=*/true);
  });
  shardkit::fuzz::refuse_or_abort("read_ema_optimization_step", [&] { (void)read_ema_optimization_step(path); });

  shardkit::fuzz::refuse_or_abort("LossScaler::load_json", [&] {
    LossScaler scaler(65536.0, 2000);
    scaler.load_json(text, path);
    LossScaler again(1.0, 2000);
    again.load_json(scaler.state_json(), "state_json()");
    if (again.scale() != scaler.scale() || again.skipped_updates() != scaler.skipped_updates()) std::abort();
  });

  shardkit::fuzz::refuse_or_abort("BaseModelRecord::parse", [&] {
    const auto record = BaseModelRecord::parse(text, path);
    const auto again = BaseModelRecord::parse(record.to_json(), "to_json()");
    if (again.path != record.path || again.files.size() != record.files.size()) std::abort();
    for (const auto& [name, stamp] : record.files) {
      const auto it = again.files.find(name);
      if (it == again.files.end() || it->second.size != stamp.size || it->second.xxh3_64 != stamp.xxh3_64) std::abort();
    }
  });
  return 0;
}
