// The CheckpointManager: what a run's checkpoints hold and how a run continues from one (save,
// resume, starting weights, a LoRA adapter to continue, the merged model of a LoRA run).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "background_writer.hpp"
#include "checkpoint_io.hpp"
#include "checkpointer.hpp"
#include "host_staging.hpp"
#include "config_provenance.hpp"
#include "train_options.hpp"
#include "data_loader.hpp"
#include "ema.hpp"
#include "log_window.hpp"
#include "loss_scaler.hpp"
#include "shardkit/backend.hpp"
#include "shardkit/mesh.hpp"
#include "normalizer.hpp"
#include "adamw.hpp"
#include "scheduler.hpp"
#include "peft.hpp"
#include "shardkit/dataset.hpp"
#include "shardkit/policy.hpp"

namespace shardkit::train {

/// The parts of a run whose state a checkpoint holds; the trainer owns them.
struct CheckpointedParts {
  Backend& backend;
  Policy& policy;
  AdamW& optimizer;
  Scheduler& scheduler;
  LossScaler* scaler;  ///< fp16 only, else null
  DataLoader& loader;
  const Normalizer& normalizer;                ///< LeRobot's processor files, when active
  const std::optional<LoraOptions>& lora;      ///< set in a PEFT run
  const LoraSummary& lora_summary;
  Ema* ema = nullptr;                          ///< --ema.enable only
  const Dataset* dataset = nullptr;            ///< its changed tokenizer goes into pretrained_model/
};

/// The run a checkpoint belongs to: what its records and messages need.
struct CheckpointedRun {
  std::string output_dir;
  std::int64_t steps = 0, batch_size = 0, accum = 0;
  /// A PEFT run's base model record (BaseModelRecord JSON, rank 0's), kept in each checkpoint.
  std::string base_record;
};

/// Where a resumed run continues.
struct ResumePoint {
  std::int64_t step = 0;
  LogWindow window;  ///< what the first log line after the resume averages besides its own steps
};

/// Every rank makes the same calls in the same order (they are collective over the mesh).
///
/// With --checkpoint.async_mode=async, save() copies the state into host buffers and returns;
/// a background writer per rank writes and publishes it over `writer_group` (a group of every
/// rank of its own, so that its collectives never interleave with training's). One save is in
/// flight at a time.
class CheckpointManager {
 public:
  /// `writer_group`: every rank of the run, for the background writer (async mode only, else null).
  CheckpointManager(const Registry& registry, const Config& config, const Provenance& provenance,
                    const Runtime& runtime, DeviceMesh& mesh, CheckpointedParts parts, CheckpointedRun run,
                    std::string format, std::shared_ptr<CommGroup> writer_group = nullptr);

  /// Writes <output_dir>/checkpoints/<step>: the model (in a PEFT run its trainable part),
  /// optimizer, scheduler, loss scale, data position, `window`, the configuration and the
  /// policy's files, and with an Ema pretrained_model_ema/ and its records; publishes it as `last`.
  /// In async mode it first waits for the save in flight, then starts this one in the background.
  void save(std::int64_t step, const LogWindow& window);
  /// Async mode: whether the save in flight has ended with a failure that must stop the run
  /// (--checkpoint.on_error=stop; with warn the failure is logged and false returned). Does not
  /// block; reports each failure once.
  bool background_save_failed();
  /// After any rank's background_save_failed(): waits for this rank's writer and throws
  /// RuntimeError naming the checkpoint and the reason.
  [[noreturn]] void stop_after_failed_save();
  /// Waits for the save in flight (the end of training, a stop signal): its failure throws
  /// with --checkpoint.on_error=stop, else is logged.
  void finish();
  /// Loads checkpoint folder `dir` (checked against its manifest first) into every part and
  /// seeks the loader; where training continues. An Ema continues the checkpoint's shadow, or
  /// restarts from the loaded weights (with a warning) when the checkpoint has none. Throws
  /// ConfigError or FormatError naming what is wrong, with nothing changed on disk.
  ResumePoint resume(const std::string& dir);
  /// --policy.path: the weights of a checkpoint's pretrained_model folder (the base of a PEFT
  /// run), or the EMA weights of its pretrained_model_ema folder.
  void load_weights(const std::string& pretrained_dir);
  /// --peft.adapter_path: the adapters (and modules trained whole) of a LoRA run's checkpoint,
  /// `adapter_dir` being its pretrained_model (or pretrained_model_ema) folder, onto the base
  /// (after load_weights()).
  void load_adapter(const std::string& adapter_dir);
  /// --peft.merge: the full weights with the adapters folded in, <output_dir>/merged_model/.
  void save_merged_model();

 private:
  /// Checks checkpoint `dir` against its manifest (sizes; checksums with --checkpoint.verify)
  /// on rank 0 and throws FormatError on every rank naming the damaged file.
  void verify(const std::string& dir);
  /// Throws FormatError when shardkit checkpoint `checkpoint` (one with a manifest) holds a
  /// link that leads outside it (verify() finds the same on resume).
  void refuse_links_leaving(const std::string& checkpoint) const;
  /// The backend's model state; in a PEFT run only the trainable entries (`trainable_only`,
  /// what checkpoints hold, marked as an adapter) or only the base's (the starting weights).
  void collect_model_state(ShardedState& state, bool trainable_only) const;
  /// Fills the model (and optimizer) state in place from checkpoint folder `dir`, saved in `format`;
  /// the model from pretrained_model_ema/ with `ema_weights`. With the optimizer also an Ema's
  /// shadow when the checkpoint has one (it has ema_state.json): returns whether it did.
  bool load_state(const std::string& dir, CheckpointFormat& format, bool with_optimizer, bool ema_weights = false);
  /// An Ema's part of a checkpoint: "ema." entries into `state` (after the model's), the files
  /// of pretrained_model/ again under pretrained_model_ema/, ema_state.json and LeRobot's
  /// ema_state.pt (the shadow gathered whole to rank 0). Collective.
  void add_ema(ShardedState& state, std::map<std::string, std::string>& files) const;
  TrainingStep training_step_record(std::int64_t step) const;
  /// pretrained_model/config.json: the policy's own form (PretrainedConfigWriter) or its options.
  std::string pretrained_config_json() const;
  /// What follows a checkpoint's publication: the log line, --save_total_limit's removals (rank 0).
  void published(const std::string& dir, const std::string& how) const;
  /// Async mode: copies `state` into the host buffers and starts the writer on checkpoint
  /// `<root>/<name>`; `started` is when save() began, `waited` the seconds it waited for the
  /// previous save (for the log line that says how long training was blocked).
  void start_background_save(const std::string& root, const std::string& name, const ShardedState& state,
                             std::map<std::string, std::string> files, std::chrono::steady_clock::time_point started,
                             double waited);
  /// Waits for the save in flight and acts on its failure as --checkpoint.on_error says.
  void settle_background_save();
  /// With --checkpoint.on_error=warn: logs `failure` (when this rank knows it) and returns true;
  /// with stop: false, the caller stops the run.
  bool warned(const std::string& failure) const;
  /// The message of a failed background save, with what happens next.
  std::string background_failure_message(const std::string& failure, bool stopping) const;

  const Config& config_;
  const TrainOptions options_;  ///< config_'s values of shardkit-train's own options
  const Provenance& provenance_;
  const Runtime& runtime_;
  DeviceMesh& mesh_;
  CheckpointedParts parts_;
  CheckpointedRun run_;
  Checkpointer checkpointer_;
  // Async mode: the writer's group and Checkpointer, the host copy of the state, the writer
  // (last: it is joined before what its job uses is destroyed).
  std::shared_ptr<CommGroup> writer_group_;
  std::unique_ptr<Checkpointer> background_checkpointer_;
  HostStaging staging_;
  std::string failure_;  ///< a failed background save, reported, the run about to stop
  BackgroundWriter writer_;
};

}  // namespace shardkit::train
