// The training run: setup from the configuration, the loop, checkpoints, resume.
#include "trainer.hpp"
#include "elapsed.hpp"
#include "tensor_memory.hpp"

#include <numeric>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <optional>
#include <utility>

#include "shardkit/capability.hpp"
#include "shardkit/error.hpp"
#include "shardkit/error_text.hpp"
#include "shardkit/files.hpp"
#include "shardkit/ledger.hpp"
#include "shardkit/logging.hpp"
#include "shardkit/optimizer_preset.hpp"
#include "peft.hpp"
#include "shardkit/precision.hpp"
#include "ledger.hpp"
#include "activation_checkpoints.hpp"
#include "base_model_record.hpp"
#include "checkpoint_manager.hpp"
#include "checkpoint_limit.hpp"
#include "checkpoint_manifest.hpp"
#include "evaluation.hpp"
#include "malloc_tuning.hpp"
#include "optimizer_setup.hpp"
#include "preemption.hpp"
#include "processor_files.hpp"  // dataset_normalizer
#include "rank_agreement.hpp"
#include "run_folder.hpp"
#include "saved_policy_files.hpp"
#include "token_embeddings.hpp"
#include "train_step.hpp"
#include "wrap_check.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

Trainer::Trainer(Config config, const Registry& registry, const Runtime& runtime,
                 const Selection& selection, const MeshShape& mesh, std::string resume_dir,
                 Provenance provenance)
    : config_(std::move(config)),
      provenance_(std::move(provenance)),
      registry_(registry),
      runtime_(runtime),
      selection_(selection) {
  auto log = logger();
  // Counted from here on, so the end of the run can report the peak of tensor memory.
  if (runtime_.device == "cpu") install_cpu_tensor_counter();
  options_ = TrainOptions::from(config_);
  join_run(mesh);
  output_dir_ = options_.output_dir;
  if (output_dir_.empty()) {
    // The default folder is named after the clock: rank 0's name for everyone.
    output_dir_ = from_rank0(mesh_->world(), default_output_dir(options_.job_name, std::time(nullptr)));
    config_.set("output_dir", output_dir_);
  }
  check_same_config(mesh_->world(), config_);
  make_paths_absolute(config_, provenance_);  // after the comparison: each rank's own working directory
  options_ = TrainOptions::from(config_);     // with the absolute paths
  steps_ = options_.steps;
  batch_size_ = options_.batch_size;
  accum_ = options_.accelerator_gradient_accumulation_steps;
  rank0_verdict(mesh_->world(), [this] { return run_lock_.acquire(output_dir_); });
  if (runtime_.is_main())
    for (const auto& line : remove_unfinished_saves((fs::path(output_dir_) / "checkpoints").string()))
      log->info("{}", line);
  // --save_total_limit removes old checkpoints: only ever folders shardkit wrote.
  if (options_.save_total_limit > 0)
    rank0_verdict(mesh_->world(), [this] {
      const auto foreign = foreign_checkpoint_entries((fs::path(output_dir_) / "checkpoints").string());
      std::string names;
      for (const auto& name : foreign) names += (names.empty() ? "" : ", ") + name;
      return foreign.empty() ? std::string()
                             : "--save_total_limit=" + std::to_string(options_.save_total_limit) + " removes old "
                               "checkpoints from " + (fs::path(output_dir_) / "checkpoints").string() +
                               ", which holds entries shardkit did not write (" + names + "): move them out, or "
                               "leave --save_total_limit at 0 (keep every checkpoint)";
    });
  agree_on_start(mesh_->world(), output_dir_, runtime_.restart_count, resume_dir);
  // A PEFT run's checkpoints need its base again: they record it, and a resume checks it.
  if (peft_enabled(config_) && !options_.policy_path.empty())  // else refused with the PEFT options
    base_record_ = base_model_record_at_start(mesh_->world(), options_.policy_path, resume_dir);

  const auto threads = options_.num_threads;
  if (threads > 0) torch::set_num_threads(static_cast<int>(threads));
  if (runtime_.device == "cpu" && !keep_freed_memory_in_process())
    log->debug("CPU memory: the C library is not glibc; freed tensor memory goes back to the system as it likes");
  torch::manual_seed(static_cast<std::uint64_t>(options_.seed));

  dataset_ = registry_.create_as<Dataset>("dataset", selection_.dataset,
                                          context_for("dataset", selection_.dataset));
  if (const auto epochs = options_.epochs; epochs > 0) steps_ = steps_for_epochs(epochs);
  auto policy_context = context_for("policy", selection_.policy);
  policy_context.features = dataset_->features();
  if (const auto path = options_.policy_path; !path.empty()) {
    policy_context.features = features_for_saved_policy(path, policy_context.features, selection_.dataset);
    check_processor_files(path);
  }
  policy_ = registry_.create_as<Policy>("policy", selection_.policy, policy_context);
  match_token_embeddings(*dataset_, *policy_, selection_.policy, runtime_.is_main() ? log.get() : nullptr);
  try {
    if (auto* normalized = capability<NormalizedPolicy>(*policy_)) {
      normalizer_ = dataset_normalizer(*dataset_, normalized->normalization_mapping());
      if (!normalizer_.stats().empty()) normalized->set_stats(normalizer_.stats());
    }
  } catch (const ConfigError& e) {
    throw ConfigError("policy '" + selection_.policy + "' on dataset '" + selection_.dataset + "': " + e.what());
  }
  log_normalization();
  try {
    dataset_->set_delta_indices(policy_->delta_indices());
  } catch (const ConfigError& e) {
    throw ConfigError("policy '" + selection_.policy + "' on dataset '" + selection_.dataset + "': " + e.what());
  }
  // Adapters go on before the backend lays the model out: frozen parameters get no gradients,
  // no gradient sync and no optimizer state.
  if (peft_enabled(config_)) {
    auto peft = setup_peft(config_, *policy_);
    lora_ = std::move(peft.options);
    lora_summary_ = std::move(peft.summary);
  }
  setup_activation_checkpointing(config_, selection_.backend, *policy_, selection_.policy,
                                 runtime_.is_main() ? log.get() : nullptr);
  policy_->to(torch::Device(runtime_.device));
  backend_ = registry_.create_as<Backend>("backend", selection_.backend,
                                          context_for("backend", selection_.backend));
  if (const auto problem = wrap_modules_problem(*policy_, selection_.policy); !problem.empty())
    log->warn("{}", problem);
  backend_->setup(*policy_);

  std::string preset_notes;
  const auto* preset_policy = capability<OptimizerPresetPolicy>(std::as_const(*policy_));
  const auto preset = preset_policy ? std::optional(preset_policy->optimizer_preset()) : std::nullopt;
  const auto adam = adamw_options(config_, provenance_, preset ? &*preset : nullptr, preset_notes);
  if (!preset_notes.empty())
    log->info("optimizer: the {} policy's preset: {} (--optimizer.lr and --optimizer.weight_decay, when given, "
              "win; the policy's own options set the rest)", selection_.policy, preset_notes);
  optimizer_ = std::make_unique<AdamW>(backend_->parameters(), adam,
                                       Replicas::among(mesh_->world().rank(), mesh_->world().size()));
  scheduler_ = std::make_unique<Scheduler>(scheduler_options(config_, steps_, adam.lr));
  if (resolve_precision(options_.accelerator_mixed_precision).needs_loss_scaler())
    scaler_ = std::make_unique<LossScaler>(options_.accelerator_fp16_init_scale,
                                           options_.accelerator_fp16_growth_interval);
  if (options_.ema_enable) {
    ema_ = std::make_unique<Ema>(EmaOptions::from(options_), backend_->parameters());
    log->info("EMA of the weights the optimizer steps: {}", ema_->describe());
  }

  // Batches are read and normalized (LeRobot's preprocessor) two steps ahead, off the training thread.
  LoaderOptions loading;
  if (normalizer_.active()) loading.transform = [this](Batch& batch) { normalizer_.normalize(batch); };
  loading.prefetch = 2;
  loader_ = std::make_unique<DataLoader>(*dataset_, batch_size_,
                                         static_cast<std::uint64_t>(options_.seed),
                                         mesh_->dp_group().rank(), mesh_->dp_group().size(), std::move(loading));
  checkpoints_ = std::make_unique<CheckpointManager>(
      registry_, config_, provenance_, runtime_, *mesh_,
      CheckpointedParts{*backend_, *policy_, *optimizer_, *scheduler_, scaler_.get(), *loader_, normalizer_, lora_,
                        lora_summary_, ema_.get(), dataset_.get()},
      CheckpointedRun{output_dir_, steps_, batch_size_, accum_, base_record_}, selection_.checkpoint_format,
      background_writer_group());
  if (const auto schedule = EvalSchedule::from(options_.eval_freq, options_.eval_steps, options_.eval_strategy);
      !schedule.inactive())
    evaluation_ = std::make_unique<Evaluation>(registry_, config_, runtime_, selection_.dataset, *policy_, schedule,
                                               accum_, options_.max_eval_samples);
  std::vector<std::shared_ptr<MetricsLogger>> loggers;
  if (runtime_.is_main()) {
    make_directories(output_dir_);
    // Only rank 0 logs: the values are reduced across ranks before they are logged.
    for (const auto& name : selection_.loggers)
      loggers.push_back(registry_.create_as<MetricsLogger>("logger", name, context_for("logger", name)));
  }

  // A PEFT checkpoint holds only the adapter: on resume its frozen base comes again from --policy.path.
  if (const auto path = options_.policy_path; !path.empty() && (resume_dir.empty() || lora_))
    checkpoints_->load_weights(path);
  if (!resume_dir.empty())
    resumed_ = checkpoints_->resume(resume_dir);
  else if (const auto adapter = options_.peft_adapter_path; lora_ && !adapter.empty())
    checkpoints_->load_adapter(adapter);
  if (ema_ && resume_dir.empty()) ema_->restart();  // from the weights training starts from, loaded above
  for (const auto& l : loggers) l->start(LoggerStart{output_dir_, resumed_.step});
  metrics_ = std::make_unique<MetricsProcessor>(steps_, options_.log_freq, batch_size_, std::move(loggers));

  std::int64_t num_params = 0;
  for (const auto& p : policy_->parameters()) num_params += p.numel();
  log->info("policy {} ({} parameters), dataset {} ({} samples), backend {}, checkpoint format {}",
            selection_.policy, num_params, selection_.dataset, dataset_->size(), selection_.backend,
            selection_.checkpoint_format);
  const auto dp = mesh_->dp_group().size();
  log->info("Effective batch size: {} x {} dp workers x {} grad accum = {} (topology: {})",
            batch_size_, dp, accum_, batch_size_ * dp * accum_, mesh_->describe());
  log->info("output_dir: {}", output_dir_);
  run_lock_.started();
}

std::int64_t Trainer::steps_for_epochs(std::int64_t epochs) const {
  const auto dp = mesh_->dp_group().size();
  const auto per_epoch = dataset_->size() / (batch_size_ * dp);  // the loader drops the last partial batch
  const auto steps = (epochs * per_epoch + accum_ - 1) / accum_ * accum_;
  logger()->info("--epochs={}: {} loop steps ({} batches of {} x {} dp workers per epoch of {} samples{})", epochs,
                 steps, per_epoch, batch_size_, dp, dataset_->size(),
                 steps == epochs * per_epoch ? "" : ", rounded up to whole optimizer updates");
  return std::max<std::int64_t>(steps, accum_);
}

PluginContext Trainer::context_for(const std::string& kind, const std::string& name) const {
  auto ctx = plugin_context(config_, runtime_, kind, name);
  if (kind == "backend") ctx.mesh = mesh_.get();
  return ctx;
}

void Trainer::log_normalization() const {
  std::string normalized;
  for (const auto& [name, feature] : normalizer_.features())
    if (const auto mode = normalizer_.mode_of(name); mode != NormalizationMode::Identity)
      normalized += (normalized.empty() ? "" : ", ") + name + " " + normalization_mode_name(mode);
  if (!normalized.empty()) logger()->info("normalizing with the dataset's statistics: {}", normalized);
  for (const auto& name : normalizer_.unnormalized())
    logger()->warn("feature '{}' is left unnormalized: the dataset has no statistics of it", name);
}

void Trainer::join_run(const MeshShape& shape) {
  if (!runtime_.multi_process()) {
    mesh_ = std::make_unique<DeviceMesh>(shape, 0, nullptr);
    return;
  }
  comm_ = registry_.create_as<Comm>("comm", selection_.comm, context_for("comm", selection_.comm));
  const double timeout_s = options_.distributed_timeout_s;
  logger()->debug("joining the run at {}:{} ({} of {}, timeout {} s)", runtime_.master_addr,
                  runtime_.master_port, runtime_.rank, runtime_.world_size, timeout_s);
  comm_->init(CommInit::from_runtime(runtime_, timeout_s));
  mesh_ = std::make_unique<DeviceMesh>(shape, runtime_.rank, comm_.get());
  if (options_.distributed_collective_ledger) {
    ledger::Options options;
    options.check_steps = options_.distributed_check_collectives;
    ledger_ = std::make_shared<ledger::Ledger>(comm_->store(), runtime_.rank, runtime_.world_size,
                                               selection_.backend, options);
    mesh_->wrap_groups([this](std::shared_ptr<CommGroup> group) { return ledger_->wrap(std::move(group)); });
  }
}

std::shared_ptr<CommGroup> Trainer::background_writer_group() {
  if (options_.checkpoint_async_mode == "disabled" || !options_.save_checkpoint) return nullptr;
  if (!comm_) return make_local_group("checkpoint writer");
  // The writer's group must be a second Gloo group beside training's: a second NCCL communicator
  // on another thread could interleave with training's collectives differently on each rank, and
  // the whole-state formats gather host tensors, which NCCL does not move.
  if (selection_.comm != "gloo") {
    if (runtime_.is_main())
      logger()->warn("--checkpoint.async_mode={}: asynchronous saves run over Gloo only, and this run's transport "
                     "is {}; checkpoints are saved synchronously",
                     options_.checkpoint_async_mode, selection_.comm);
    return nullptr;
  }
  std::vector<int> everyone(static_cast<std::size_t>(runtime_.world_size));
  std::iota(everyone.begin(), everyone.end(), 0);
  return comm_->new_group(everyone, "checkpoint_writer");  // collective: every rank, at the same point
}

int Trainer::stop_requested() {
  CollectiveScope scope("trainer, stop check");
  const auto reasons = stop_reasons_of_any_rank(mesh_->world(), {stop_signal(), checkpoints_->background_save_failed()});
  if (reasons.failed_save) checkpoints_->stop_after_failed_save();  // every rank, after the same step
  return reasons.signal;
}

void Trainer::prepare_batch(Batch& batch, const torch::Device& device) {
  metrics_->count_tokens(batch);  // on the host, before the batch moves
  for (auto& [key, tensor] : batch) tensor = tensor.to(device);
}

double Trainer::epochs_done() const {
  const auto& pos = loader_->position();
  return static_cast<double>(pos.epoch) +
         static_cast<double>(pos.batch_in_epoch) / static_cast<double>(loader_->batches_per_epoch());
}

int Trainer::run() {
  auto log = logger();
  const bool save = options_.save_checkpoint;
  const auto device = torch::Device(runtime_.device);
  TrainStep train_step({*backend_, *policy_, *optimizer_, *scheduler_, scaler_.get(), mesh_->world(), mesh_->dp_group(),
                        ema_.get()},
                       accum_, options_.optimizer_grad_clip_norm, resumed_.step);
  policy_->train();
  metrics_->start(resumed_.step, resumed_.window);
  const auto normalize = [this](Batch& batch) {
    if (normalizer_.active()) normalizer_.normalize(batch);
  };
  log->info("training from step {} to {}", resumed_.step, steps_);
  reset_cpu_tensor_peak();

  auto epochs_at_update = static_cast<std::int64_t>(std::floor(epochs_done() + 1e-9));
  for (std::int64_t step = resumed_.step; step < steps_; ++step) {
    const auto done = step + 1;
    const bool update = done % accum_ == 0;
    if (ledger_) ledger_->begin_step(done);
    // LeRobot main's phases: data (the loader), preprocessing, update; and the whole step.
    const auto t0 = Clock::now();
    auto batch = train_step.in_phase(done, "data", [&] { return loader_->next(); });
    const auto t1 = Clock::now();
    prepare_batch(batch, device);
    const auto t2 = Clock::now();
    auto outcome = train_step.run(step, batch);
    if (ledger_ && update) ledger_->end_step(done, mesh_->world());
    const auto t3 = Clock::now();
    metrics_->add({done, update, outcome.loss_part, std::move(outcome.metrics), seconds(t1 - t0), seconds(t2 - t1),
                   seconds(t3 - t2), seconds(t3 - t0)});
    // Evaluation at optimizer updates; its values join that step's log line (one is forced).
    // An update that finished an epoch (--eval_strategy / --save_strategy epoch).
    const auto epochs_now = static_cast<std::int64_t>(std::floor(epochs_done() + 1e-9));
    const bool epoch_ended = update && epochs_now > epochs_at_update;
    if (update) epochs_at_update = epochs_now;
    std::map<std::string, double> evaluated;
    if (evaluation_ && evaluation_->due(done, update, steps_, epoch_ended))
      evaluated = evaluation_->run(done, *backend_, *policy_, batch_size_, mesh_->dp_group(), normalize, runtime_.device);
    if (metrics_->due(done, update, !evaluated.empty())) {
      auto comm = ledger_ ? ledger::traffic_metrics(ledger_->last_update_traffic()) : std::map<std::string, double>();
      metrics_->write_line(
          done, {epochs_done(), train_step.lr(), train_step.grad_norm(), std::move(evaluated), std::move(comm)},
          mesh_->world());
    }
    const bool scheduled = options_.save_strategy == "epoch" ? epoch_ended
                                                              : options_.save_freq > 0 && done % options_.save_freq == 0;
    const bool saved_now = save && (scheduled || done == steps_);
    if (saved_now) checkpoints_->save(done, metrics_->window());
    if (const int sig = update && done < steps_ ? stop_requested() : 0) {
      if (save && !saved_now) checkpoints_->save(done, metrics_->window());
      checkpoints_->finish();
      metrics_->finish();
      log->info("{} by {} after step {}{}", sig == SIGINT ? "interrupted" : "stopped", signal_name(sig), done,
                save ? "; continue with --resume=true --output_dir=" + output_dir_
                     : " (--save_checkpoint=false: nothing saved)");
      return sig;
    }
  }
  checkpoints_->finish();
  metrics_->finish();
  if (lora_ && options_.peft_merge) checkpoints_->save_merged_model();
  log->info("training done: {} steps in {:.1f} s", steps_ - resumed_.step, metrics_->elapsed_s());
  if (const auto phases = train_step.describe_phase_times(); !phases.empty())
    log->info("time per optimizer step: {}", phases);
  if (ledger_)
    if (const auto traffic = ledger_->traffic_summary_text(); !traffic.empty()) log->info("{}", traffic);
  if (cpu_tensor_counter_installed())
    log->info("peak CPU tensor memory while training: {} ({} bytes) on rank {}", format_bytes(cpu_tensor_peak()),
              cpu_tensor_peak(), runtime_.rank);
  return 0;
}

}  // namespace shardkit::train
