// The training loop: builds the run from a resolved configuration and trains it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint_manager.hpp"
#include "config_provenance.hpp"
#include "data_loader.hpp"
#include "ema.hpp"
#include "evaluation.hpp"
#include "metrics_processor.hpp"
#include "run_lock.hpp"
#include "shardkit/backend.hpp"
#include "shardkit/comm.hpp"
#include "shardkit/config.hpp"
#include "shardkit/dataset.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/mesh.hpp"
#include "normalizer.hpp"
#include "peft.hpp"
#include "adamw.hpp"
#include "scheduler.hpp"
#include "shardkit/runtime.hpp"
#include "loss_scaler.hpp"
#include "train_options.hpp"

namespace shardkit::ledger {
class Ledger;
}

namespace shardkit::train {

/// One training run. Construction builds everything (and validates what the
/// configuration alone could not); run() trains and checkpoints.
class Trainer {
 public:
  /// `resume_dir` is the checkpoint folder to continue from ("" for a fresh run).
  /// `mesh` is the resolved topology; with more than one process the trainer joins the
  /// run through the selected comm plugin before anything else.
  /// `provenance` says where each value of `config` came from; checkpoints keep it beside
  /// train_config.json.
  Trainer(Config config, const Registry& registry, const Runtime& runtime,
          const Selection& selection, const MeshShape& mesh, std::string resume_dir,
          Provenance provenance = {});
  /// Trains; returns the signal (SIGTERM or SIGINT) that stopped the run after a
  /// checkpoint, or 0 when every step ran.
  int run();

 private:
  PluginContext context_for(const std::string& kind, const std::string& name) const;
  /// Loop steps that make `epochs` passes over the dataset, whole optimizer updates.
  std::int64_t steps_for_epochs(std::int64_t epochs) const;
  void join_run(const MeshShape& shape);
  void log_normalization() const;
  /// Makes a batch from the loader ready for the step: its tokens counted, on the training device.
  void prepare_batch(Batch& batch, const torch::Device& device);
  /// Fractional epochs of the data the loader has handed out.
  double epochs_done() const;
  /// The background checkpoint writer's group of every rank (--checkpoint.async_mode=async), else null.
  std::shared_ptr<CommGroup> background_writer_group();
  /// SIGTERM or SIGINT on any rank (0 = none): all ranks agree at this update, checkpoint,
  /// and stop. A background save that failed on any rank throws on every rank
  /// (--checkpoint.on_error=stop).
  int stop_requested();

  RunLock run_lock_;  ///< first member: released (and a failed start cleaned up) last
  Config config_;
  TrainOptions options_;  ///< config_'s values of shardkit-train's own options
  Provenance provenance_;
  const Registry& registry_;
  Runtime runtime_;
  Selection selection_;
  std::string output_dir_;
  std::int64_t steps_, batch_size_, accum_;  ///< steps_ as --epochs makes it
  ResumePoint resumed_;  ///< where training starts: step 0, or the checkpoint's step and log window

  std::shared_ptr<Comm> comm_;
  std::unique_ptr<DeviceMesh> mesh_;
  std::shared_ptr<ledger::Ledger> ledger_;  // multi-process runs with --distributed.collective_ledger
  std::shared_ptr<Dataset> dataset_;
  std::shared_ptr<Policy> policy_;
  std::optional<LoraOptions> lora_;  ///< set in a PEFT run
  std::string base_record_;  ///< a PEFT run's base model record (BaseModelRecord JSON), on rank 0
  LoraSummary lora_summary_;
  std::shared_ptr<Backend> backend_;
  std::unique_ptr<AdamW> optimizer_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<LossScaler> scaler_;  // fp16 only
  Normalizer normalizer_;  ///< LeRobot's preprocessor normalization; the loader's thread uses it
  std::unique_ptr<DataLoader> loader_;
  std::unique_ptr<Ema> ema_;  ///< --ema.enable only
  std::unique_ptr<CheckpointManager> checkpoints_;  ///< after the parts it refers to
  std::unique_ptr<Evaluation> evaluation_;          ///< set when --eval_freq > 0
  std::unique_ptr<MetricsProcessor> metrics_;  ///< with rank 0's logger plugins
};

}  // namespace shardkit::train
