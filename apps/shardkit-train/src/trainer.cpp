// The training loop: setup, accumulation-aware updates, logging, checkpoints, resume.
#include "trainer.hpp"
#include "tensor_memory.hpp"

#include <torch/torch.h>

#include <chrono>
#include <csignal>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <optional>

#include "shardkit/error.hpp"
#include "shardkit/error_text.hpp"
#include "shardkit/files.hpp"
#include "shardkit/ledger.hpp"
#include "shardkit/optimizer_preset.hpp"
#include "shardkit/peft.hpp"
#include "shardkit/safetensors.hpp"
#include "shardkit/safetensors_torch.hpp"
#include "shardkit/precision.hpp"
#include "shardkit/pretrained_config.hpp"
#include "shardkit/pretrained_files.hpp"
#include "shardkit/logging.hpp"
#include "shardkit/sharding.hpp"
#include "comm/ledger.hpp"         // core internals the trainer still reaches into
#include "state/gather_whole.hpp"
#include "base_model_record.hpp"
#include "checkpoint_manifest.hpp"
#include "evaluation.hpp"
#include "malloc_tuning.hpp"
#include "preemption.hpp"
#include "processor_files.hpp"
#include "rank_agreement.hpp"
#include "saved_policy_files.hpp"
#include "wrap_check.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string default_output_dir(const std::string& job_name) {
  const std::time_t now = std::time(nullptr);
  char date[32], time[32];
  std::strftime(date, sizeof(date), "%Y-%m-%d", std::localtime(&now));
  std::strftime(time, sizeof(time), "%H-%M-%S", std::localtime(&now));
  return "outputs/train/" + std::string(date) + "/" + time + "_" + job_name;
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

/// A text batch's tokens, padding left out: attention_mask's ones, else the labels other than
/// -100, else every input_id; nothing for a batch without input_ids (no text).
std::optional<std::int64_t> batch_tokens(const Batch& batch) {
  if (!batch.count("input_ids")) return std::nullopt;
  if (const auto mask = batch.find("attention_mask"); mask != batch.end())
    return mask->second.ne(0).sum().item<std::int64_t>();
  if (const auto labels = batch.find("labels"); labels != batch.end())
    return labels->second.ne(-100).sum().item<std::int64_t>();
  return batch.at("input_ids").numel();
}

/// The options naming files and folders that a resume reads again (the base model, the
/// adapter, the data), made absolute in the run's configuration, and so in train_config.json:
/// a run resumes from any working directory. Values that name nothing here stay as given.
void make_paths_absolute(Config& config, Provenance& provenance) {
  for (const auto* key : {"policy.path", "peft.adapter_path", "dataset.path", "dataset.validation_path",
                          "dataset.root", "accelerator.zero.config_file"}) {
    if (!config.has(key)) continue;
    const auto given = config.get_string(key);
    std::error_code ec;
    if (given.empty() || fs::path(given).is_absolute() || !fs::exists(given, ec)) continue;
    auto absolute = fs::absolute(given, ec).lexically_normal();
    if (ec) continue;
    if (absolute.filename().empty()) absolute = absolute.parent_path();
    config.set(key, absolute.string());
    provenance.add_note(key, "stored absolute; given as " + given);
  }
}

}  // namespace

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
  steps_ = config_.get_int("steps");
  batch_size_ = config_.get_int("batch_size");
  accum_ = config_.get_int("accelerator.gradient_accumulation.steps");
  log_freq_ = config_.get_int("log_freq");
  save_freq_ = config_.get_int("save_freq");

  join_run(mesh);
  output_dir_ = config_.get_string("output_dir");
  if (output_dir_.empty()) {
    // The default folder is named after the clock: rank 0's name for everyone.
    output_dir_ = from_rank0(mesh_->world(), default_output_dir(config_.get_string("job_name")));
    config_.set("output_dir", output_dir_);
  }
  check_same_config(mesh_->world(), config_);
  make_paths_absolute(config_, provenance_);  // after the comparison: each rank's own working directory
  rank0_verdict(mesh_->world(), [this] { return run_lock_.acquire(output_dir_); });
  if (runtime_.is_main())
    for (const auto& line : remove_unfinished_saves((fs::path(output_dir_) / "checkpoints").string()))
      log->info("{}", line);
  agree_on_output_dir(resume_dir);
  // A PEFT run's checkpoints need its base again: they record it, and a resume checks it.
  if (peft_enabled(config_)) record_base_model(resume_dir);

  const auto threads = config_.get_int("num_threads");
  if (threads > 0) torch::set_num_threads(static_cast<int>(threads));
  if (runtime_.device == "cpu" && !keep_freed_memory_in_process())
    log->debug("CPU memory: the C library is not glibc; freed tensor memory goes back to the system as it likes");
  torch::manual_seed(static_cast<std::uint64_t>(config_.get_int("seed")));

  dataset_ = registry_.create_as<Dataset>("dataset", selection_.dataset,
                                          context_for("dataset", selection_.dataset));
  if (const auto epochs = config_.get_int("epochs"); epochs > 0) steps_ = steps_for_epochs(epochs);
  auto policy_context = context_for("policy", selection_.policy);
  policy_context.features = dataset_->features();
  if (const auto path = config_.get_string("policy.path"); !path.empty()) {
    policy_context.features = features_for_saved_policy(path, policy_context.features, selection_.dataset);
    check_processor_files(path);
  }
  policy_ = registry_.create_as<Policy>("policy", selection_.policy, policy_context);
  try {
    if (auto* normalized = dynamic_cast<NormalizedPolicy*>(policy_.get())) {
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
  if (peft_enabled(config_)) setup_peft();
  policy_->to(torch::Device(runtime_.device));
  backend_ = registry_.create_as<Backend>("backend", selection_.backend,
                                          context_for("backend", selection_.backend));
  if (const auto problem = wrap_modules_problem(*policy_, selection_.policy); !problem.empty())
    log->warn("{}", problem);
  backend_->setup(*policy_);
  checkpointer_ = std::make_unique<Checkpointer>(registry_, config_, runtime_, mesh_->world(),
                                                 selection_.checkpoint_format);

  AdamWOptions adam;
  adam.lr = config_.get_float("optimizer.lr");
  adam.beta1 = config_.get_float("optimizer.beta1");
  adam.beta2 = config_.get_float("optimizer.beta2");
  adam.eps = config_.get_float("optimizer.eps");
  adam.weight_decay = config_.get_float("optimizer.weight_decay");
  apply_optimizer_preset(adam);
  optimizer_ = std::make_unique<AdamW>(backend_->parameters(), adam,
                                       Replicas::among(mesh_->world().rank(), mesh_->world().size()));

  SchedulerOptions sched;
  sched.type = config_.get_string("scheduler.type");
  sched.warmup_steps = config_.get_int("scheduler.num_warmup_steps");
  sched.decay_steps = config_.get_int("scheduler.num_decay_steps");
  if (sched.decay_steps == 0) sched.decay_steps = steps_;
  sched.peak_lr = adam.lr;
  sched.decay_lr = config_.get_float("scheduler.decay_lr");
  scheduler_ = std::make_unique<Scheduler>(sched);
  if (resolve_precision(config_.get_string("accelerator.mixed_precision")).needs_loss_scaler())
    scaler_ = std::make_unique<LossScaler>(config_.get_float("accelerator.fp16.init_scale"),
                                           config_.get_int("accelerator.fp16.growth_interval"));

  // Batches are read and normalized (LeRobot's preprocessor) two steps ahead, off the training thread.
  LoaderOptions loading;
  if (normalizer_.active()) loading.transform = [this](Batch& batch) { normalizer_.normalize(batch); };
  loading.prefetch = 2;
  loader_ = std::make_unique<DataLoader>(*dataset_, batch_size_,
                                         static_cast<std::uint64_t>(config_.get_int("seed")),
                                         mesh_->dp_group().rank(), mesh_->dp_group().size(), std::move(loading));
  if (const auto every = config_.get_int("eval_freq"); every > 0) make_evaluation(every);
  if (runtime_.is_main()) {
    make_directories(output_dir_);
    // Only rank 0 logs: the values are reduced across ranks before they are logged.
    for (const auto& name : selection_.loggers)
      loggers_.push_back(registry_.create_as<MetricsLogger>("logger", name, context_for("logger", name)));
  }

  // A PEFT checkpoint holds only the adapter: on resume its frozen base comes again from --policy.path.
  if (const auto path = config_.get_string("policy.path"); !path.empty() && (resume_dir.empty() || lora_))
    load_weights(path);
  if (!resume_dir.empty())
    resume_from(resume_dir);
  else if (const auto adapter = config_.get_string("peft.adapter_path"); lora_ && !adapter.empty())
    load_adapter(adapter);
  for (const auto& l : loggers_) l->start(LoggerStart{output_dir_, start_step_});

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

void Trainer::setup_peft() {
  lora_ = LoraOptions::from_config(config_, *policy_);
  lora_summary_ = apply_lora(*policy_, *lora_);
  std::string targets;
  for (const auto& t : lora_->target_modules) targets += (targets.empty() ? "" : ",") + t;
  logger()->info("LoRA: {} trainable parameters of {} ({:.4f}%): r {}, lora_alpha {:g}, dropout {:g} on {} modules "
                 "({}){}", lora_summary_.trainable_numel, lora_summary_.total_numel,
                 100.0 * static_cast<double>(lora_summary_.trainable_numel) /
                     static_cast<double>(std::max<std::int64_t>(1, lora_summary_.total_numel)),
                 lora_->r, lora_->lora_alpha, lora_->lora_dropout, lora_summary_.adapted.size(), targets,
                 lora_->full_training_modules.empty() ? "" : "; trained whole: " + config_.get_string("peft.full_training_modules"));
}

void Trainer::collect_model_state(ShardedState& state, bool trainable_only) const {
  backend_->model_state(state);
  if (!lora_) return;
  // A PEFT run's own state is its trainable part (adapters, full-training modules); its
  // starting weights are the rest (the frozen base, which has no adapters).
  for (auto it = state.tensors.begin(); it != state.tensors.end();) {
    if (it->first.rfind("model.", 0) != 0) {
      ++it;
      continue;
    }
    const auto name = it->first.substr(6);
    const bool keep = trainable_only ? lora_summary_.trainable.count(name) > 0
                                     : lora_summary_.adapter_parameters.count(name) == 0;
    it = keep ? std::next(it) : state.tensors.erase(it);
  }
  state.model_is_adapter = trainable_only;
}

void Trainer::apply_optimizer_preset(AdamWOptions& adam) {
  const auto* policy = dynamic_cast<const OptimizerPresetPolicy*>(policy_.get());
  if (!policy) return;
  const auto preset = policy->optimizer_preset();
  const auto chosen = [this](const char* key) {
    const auto* source = provenance_.find(key);
    return source && Provenance::kind_of(source->origin) != "default";
  };
  std::string notes;
  // Written back into the run's options, so a resume (which reads them from the checkpoint's
  // train_config.json as given values) keeps them.
  if (preset.lr && !chosen("optimizer.lr")) {
    adam.lr = *preset.lr;
    config_.set("optimizer.lr", adam.lr);
    notes += fmt::format("lr {:g}", adam.lr);
  }
  if (preset.weight_decay && !chosen("optimizer.weight_decay")) {
    adam.weight_decay = *preset.weight_decay;
    config_.set("optimizer.weight_decay", adam.weight_decay);
    notes += fmt::format("{}weight_decay {:g}", notes.empty() ? "" : ", ", adam.weight_decay);
  }
  for (const auto& group : preset.groups) {
    adam.lr_factors.emplace_back(group.prefix, adam.lr > 0 ? group.lr / adam.lr : 0.0);
    notes += fmt::format("{}lr {:g} for {}*", notes.empty() ? "" : ", ", group.lr, group.prefix);
  }
  if (!notes.empty())
    logger()->info("optimizer: the {} policy's preset: {} (--optimizer.lr and --optimizer.weight_decay, when given, "
                   "win; the policy's own options set the rest)", selection_.policy, notes);
}

void Trainer::make_evaluation(std::int64_t every) {
  if (every % accum_ != 0)
    throw ConfigError("--eval_freq=" + std::to_string(every) + " is not a multiple of "
                      "--accelerator.gradient_accumulation.steps=" + std::to_string(accum_) +
                      ": evaluation runs at optimizer updates");
  eval_freq_ = every;
  // A second instance of the dataset plugin, on its validation split; its options stay
  // alive with it (a plugin context points at them).
  eval_config_ = std::make_unique<Config>(config_);
  eval_config_->set("dataset.split", std::string("validation"));
  eval_dataset_ = registry_.create_as<Dataset>(
      "dataset", selection_.dataset, plugin_context(*eval_config_, runtime_, "dataset", selection_.dataset));
  eval_dataset_->set_delta_indices(policy_->delta_indices());
  logger()->info("evaluation every {} steps on the validation split ({} samples)", every, eval_dataset_->size());
}

std::map<std::string, double> Trainer::run_evaluation(std::int64_t step) {
  const auto t0 = Clock::now();
  const auto transform = [this](Batch& batch) {
    if (normalizer_.active()) normalizer_.normalize(batch);
  };
  const auto result = evaluate(*backend_, *policy_, *eval_dataset_, batch_size_, mesh_->dp_group(), transform,
                               runtime_.device);
  logger()->info("evaluation at step {}: loss {:.5g} | perplexity {:.5g} | {} samples{} in {:.1f} s", step,
                 result.loss, std::exp(result.loss), result.samples,
                 result.left_out ? fmt::format(" ({} of the last partial batch left out)", result.left_out) : "",
                 seconds(Clock::now() - t0));
  return {{"eval_loss", result.loss}, {"eval_perplexity", std::exp(result.loss)}};
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
  const double timeout_s = config_.get_float("distributed.timeout_s");
  logger()->debug("joining the run at {}:{} ({} of {}, timeout {} s)", runtime_.master_addr,
                  runtime_.master_port, runtime_.rank, runtime_.world_size, timeout_s);
  comm_->init(CommInit::from_runtime(runtime_, timeout_s));
  mesh_ = std::make_unique<DeviceMesh>(shape, runtime_.rank, comm_.get());
  if (config_.get_bool("distributed.collective_ledger")) {
    ledger::Options options;
    options.check_steps = config_.get_bool("distributed.check_collectives");
    ledger_ = std::make_shared<ledger::Ledger>(comm_->store(), runtime_.rank, runtime_.world_size,
                                               selection_.backend, options);
    mesh_->wrap_groups([this](std::shared_ptr<CommGroup> group) { return ledger_->wrap(std::move(group)); });
  }
}

std::string Trainer::output_dir_problem() const {
  const fs::path dir(output_dir_);
  if (fs::exists(dir) && !fs::is_directory(dir))
    return "--output_dir=" + output_dir_ + " exists and is not a folder";
  if (fs::exists(dir / "checkpoints") || fs::exists(dir / "metrics.jsonl"))
    return "--output_dir=" + output_dir_ +
           " already holds a run; pass --resume=true to continue it, or choose another "
           "--output_dir (nothing was overwritten)";
  return "";
}

void Trainer::agree_on_output_dir(std::string& resume_dir) {
  if (resume_dir.empty() && runtime_.restart_count > 0) {
    // A launcher restarted the group: continue from the last complete checkpoint if the
    // failed attempt left one, else start afresh in the same folder. Rank 0 decides.
    std::string found;
    if (mesh_->world().rank() == 0) {
      found = newest_checkpoint((fs::path(output_dir_) / "checkpoints").string());
      if (!found.empty()) found = fs::canonical(found).string();
    }
    resume_dir = from_rank0(mesh_->world(), found);
    fresh_after_restart_ = resume_dir.empty();
    logger()->info("restart {}: {}", runtime_.restart_count,
                   resume_dir.empty() ? "no checkpoint yet, starting afresh in " + output_dir_
                                      : "resuming from " + resume_dir);
  }
  if (resume_dir.empty() && !fresh_after_restart_)
    rank0_verdict(mesh_->world(), [this] { return output_dir_problem(); });
}

void Trainer::verify_checkpoint(const std::string& dir) {
  // Checksums by default, so that a corrupt checkpoint is never trained on; a checkpoint
  // without a manifest (older shardkit, another tool) is then judged by its files, unless
  // --checkpoint.verify=true asks for checksums explicitly.
  const bool asked = config_.has("checkpoint.verify");
  const bool checksums = asked ? config_.get_bool("checkpoint.verify")
                               : fs::exists(fs::path(dir) / kManifestFile);
  const auto verify = checksums ? Verify::Checksums : Verify::Sizes;
  std::string problem;
  const auto started = Clock::now();
  if (mesh_->world().rank() == 0) {
    problem = manifest_problem(dir, verify);
    if (!problem.empty())
      problem = "checkpoint " + dir + " cannot be loaded: " + problem + "; nothing was changed. " +
                other_checkpoint_advice(dir);
  }
  problem = from_rank0(mesh_->world(), problem);
  if (!problem.empty()) throw FormatError(problem);
  if (verify == Verify::Checksums)
    logger()->info("checked every file of {} against its manifest's checksums in {:.2f} s "
                   "(--checkpoint.verify=false compares sizes only)",
                   dir, seconds(Clock::now() - started));
}

void Trainer::resume_from(const std::string& dir) {
  check_checkpoint_dir(dir);
  TrainingStep record;
  try {
    record = read_training_step((fs::path(dir) / "training_state/training_step.json").string());
  } catch (const FormatError&) {
    verify_checkpoint(dir);  // names a damaged file better than the parse error, when it can
    throw;
  }
  // A hand-made mix-up: the clearer messages first.
  check_step_matches_folder(dir, record.step);
  check_scheduler_matches_step(dir, record.step, /*strict=*/false);
  verify_checkpoint(dir);
  check_scheduler_matches_step(dir, record.step, /*strict=*/true);
  if (record.step >= steps_)
    throw ConfigError("the checkpoint in " + dir + " is at step " + std::to_string(record.step) +
                      " and --steps=" + std::to_string(steps_) +
                      "; pass a larger --steps to train further");
  const auto format = checkpointer_->format_of(dir);
  if (!format)
    throw FormatError(dir + " holds no model weights in any checkpoint format this shardkit has (" +
                      checkpointer_->formats_known() + "); is it a complete checkpoint?");
  load_state(dir, *format, /*with_optimizer=*/true);
  load_rng_state(rng_state_path(dir, runtime_.rank, /*for_load=*/true));
  if (scaler_) {
    const auto path = (fs::path(dir) / "training_state/scaler_state.json").string();
    if (fs::exists(path))
      scaler_->load_json(read_text_file(path), path);
    else
      logger()->warn("{} has no scaler_state.json (it was not an fp16 run): the loss scale starts at {}", dir,
                     scaler_->scale());
  }

  start_step_ = record.step;
  log_window_ = record.log_window;
  const auto dp = static_cast<std::int64_t>(mesh_->dp_group().size());
  if (record.batch_size == batch_size_ && record.dp_world_size == dp) {
    loader_->seek(record.data);
  } else {
    // A new global batch: continue after the samples already seen, on a batch boundary.
    const auto global = batch_size_ * dp;
    const auto batches = record.samples_seen / global;
    DataPosition pos{batches / loader_->batches_per_epoch(), batches % loader_->batches_per_epoch()};
    logger()->warn("resuming with batch_size {} x {} dp workers, but the checkpoint was written "
                   "with batch_size {} x {} dp workers: continuing at epoch {}, batch {} of the new order",
                   batch_size_, dp, record.batch_size, record.dp_world_size, pos.epoch,
                   pos.batch_in_epoch);
    loader_->seek(pos);
  }
  logger()->info("resumed from {} at step {}", dir, start_step_);
}

void Trainer::load_weights(const std::string& pretrained_dir) {
  // A policy that read a Hugging Face folder's weights itself (llama) needs no checkpoint.
  if (const auto* own = dynamic_cast<const PretrainedWeightsLoader*>(policy_.get());
      own != nullptr && own->loaded_pretrained_weights()) {
    logger()->info("loaded weights from {}", pretrained_dir);
    return;
  }
  const auto checkpoint = fs::path(folder_path(pretrained_dir)).parent_path();
  const auto format = checkpointer_->format_of(checkpoint.string());
  if (!format)
    throw ConfigError("--policy.path=" + pretrained_dir + " holds no model weights in any "
                      "checkpoint format this shardkit has (" + checkpointer_->formats_known() + ")");
  load_state(checkpoint.string(), *format, /*with_optimizer=*/false);
  logger()->info("loaded weights from {}", pretrained_dir);
}

void Trainer::load_adapter(const std::string& adapter_dir) {
  auto folder = fs::path(adapter_dir).lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();
  const auto checkpoint = folder.parent_path().string();
  const auto format = fs::is_regular_file(folder / "adapter_config.json") ? checkpointer_->format_of(checkpoint) : nullptr;
  if (!format)
    throw ConfigError("--peft.adapter_path=" + adapter_dir + " is not the pretrained_model folder of a LoRA run's "
                      "checkpoint (adapter_config.json in it, the adapter in its checkpoint folder in a format this "
                      "shardkit has: " + checkpointer_->formats_known() + ")");
  // What a checkpoint of this run holds: the adapters and the modules trained whole.
  ShardedState wanted;
  collect_model_state(wanted, /*trainable_only=*/true);
  checkpointer_->load(wanted, checkpoint, *format);
  backend_->model_state_loaded();
  logger()->info("LoRA: continuing the adapter of {} ({} trainable tensors) on the base {}", folder.string(),
                 lora_summary_.trainable.size(), config_.get_string("policy.path"));
}

void Trainer::record_base_model(const std::string& resume_dir) {
  const auto base = config_.get_string("policy.path");
  if (base.empty()) return;  // refused with the PEFT options
  const auto started = Clock::now();
  rank0_verdict(mesh_->world(), [&]() -> std::string {
    const auto path = (fs::path(resume_dir) / kBaseModelFile).string();
    if (resume_dir.empty() || !fs::exists(path)) {
      if (!resume_dir.empty())
        logger()->warn("{} has no {} (saved by an older shardkit): its base model is not checked; recorded now",
                       resume_dir, kBaseModelFile);
      base_record_ = BaseModelRecord::of(base).to_json();
      return "";
    }
    auto record = BaseModelRecord::parse(read_text_file(path), path);
    if (const auto change = record.change_in(base); !change.empty())
      return "the base model changed since this run started: " + change + " (" + path + " recorded it when the "
             "run started). The checkpoint's adapter was trained on the old weights; restore them at " + base +
             ", or train the adapter further on the changed base as a new run: --policy.path=" +
             (fs::path(resume_dir) / "pretrained_model").string() + " --output_dir=<a new folder>";
    record.path = base;
    base_record_ = record.to_json();
    return "";
  });
  logger()->debug("base model {}: recorded or checked in {:.2f} s", base, seconds(Clock::now() - started));
}

void Trainer::load_state(const std::string& dir, CheckpointFormat& format, bool with_optimizer) {
  ShardedState wanted;
  collect_model_state(wanted, /*trainable_only=*/with_optimizer);
  if (with_optimizer) {
    optimizer_->state(wanted);
    optimizer_->param_groups(wanted, 0.0);
  }
  checkpointer_->load(wanted, dir, format);
  backend_->model_state_loaded();
  if (with_optimizer)
    for (const auto& difference : optimizer_->param_group_differences(wanted))
      logger()->warn("the checkpoint's optimizer has {}; training continues with the options", difference);
}

TrainingStep Trainer::training_step_record(std::int64_t step) const {
  TrainingStep r;
  r.step = step;
  r.dp_world_size = mesh_->dp_group().size();
  r.batch_size = batch_size_;
  r.grad_accum_steps = accum_;
  r.precision = config_.get_string("accelerator.mixed_precision");
  r.dp_replicate = mesh_->shape().dp_replicate;
  r.dp_shard = mesh_->shape().dp_shard;
  r.data = loader_->position();
  r.samples_seen = step * batch_size_ * r.dp_world_size;
  return r;
}

std::vector<torch::Tensor> Trainer::gradients() const {
  std::vector<torch::Tensor> grads;
  for (const auto& p : backend_->parameters()) grads.push_back(p.param.grad());
  return grads;
}

bool Trainer::unscaled_gradients_finite(std::int64_t step) {
  if (!scaler_) return true;
  const double scale = scaler_->scale();
  CollectiveScope scope("trainer, fp16 overflow check");
  const bool finite = scaler_->unscale(gradients(), mesh_->world());
  scaler_->update(!finite);
  if (!finite)
    logger()->warn("fp16: gradients overflowed at step {} with loss scale {}: update skipped, loss scale now {} "
                   "({} skipped so far)", step + 1, scale, scaler_->scale(), scaler_->skipped_updates());
  return finite;
}

std::string Trainer::pretrained_config_json() const {
  if (const auto* writer = dynamic_cast<const PretrainedConfigWriter*>(policy_.get()))
    return writer->pretrained_config_json();
  return config_.section("policy.").to_json();
}

void Trainer::save_checkpoint(std::int64_t step) {
  CollectiveScope scope("checkpoint save");
  ShardedState state;
  collect_model_state(state, /*trainable_only=*/true);
  optimizer_->state(state);
  const auto lr = scheduler_->lr(step - 1);
  optimizer_->param_groups(state, lr);
  auto record = training_step_record(step);
  record.log_window = log_window_.averaged_over(mesh_->world());
  std::map<std::string, std::string> files{
      {"pretrained_model/config.json", pretrained_config_json()},
      {"pretrained_model/train_config.json", config_.to_json()},
      {kProvenanceFile, provenance_.json(config_)},
      {"training_state/training_step.json", training_step_json(record)},
      {"training_state/scheduler_state.json", scheduler_->state_json(step)},
      {"training_state/optimizer_param_groups.json", optimizer_->param_groups_json(lr)}};
  if (scaler_) files["training_state/scaler_state.json"] = scaler_->state_json();
  if (lora_)
    files["pretrained_model/adapter_config.json"] = adapter_config_json(*lora_, config_.get_string("policy.path"));
  if (!base_record_.empty()) files[kBaseModelFile] = base_record_;  // rank 0's; rank 0 writes the files
  if (const auto* extra = dynamic_cast<const PretrainedFilesWriter*>(policy_.get()))
    for (auto& [name, content] : extra->pretrained_files()) files["pretrained_model/" + name] = std::move(content);
  if (!normalizer_.stats().empty()) files.merge(processor_files(normalizer_, runtime_.device));
  const auto dir = checkpointer_->save((fs::path(output_dir_) / "checkpoints").string(),
                                       step_dir_name(step, steps_), state, files);
  if (runtime_.is_main()) logger()->info("checkpoint saved: {}", dir);
}

void Trainer::save_merged_model() {
  CollectiveScope scope("merged model save");
  ShardedState state;
  backend_->model_state(state);
  auto gathered = gather_whole_entries(state, "model.", mesh_->world());
  if (mesh_->world().rank() != 0) return;
  std::map<std::string, at::Tensor> tensors;
  for (auto& [key, tensor] : gathered) tensors[key.substr(6)] = tensor;
  merge_lora_weights(tensors, lora_->lora_alpha / static_cast<double>(lora_->r));
  const auto dir = fs::path(output_dir_) / "merged_model";
  const auto tmp = fs::path(output_dir_) / ".tmp-merged_model";
  std::error_code ec;
  fs::remove_all(tmp, ec);
  make_directories(tmp.string());
  std::vector<safetensors::TensorRef> refs;
  for (auto& [name, tensor] : tensors) {
    tensor = tensor.detach().to(torch::kCPU).contiguous();
    refs.push_back(safetensors::ref_of(name, tensor));
  }
  safetensors::write_file((tmp / "model.safetensors").string(), refs, {{"format", "pt"}});
  write_text_file((tmp / "config.json").string(), pretrained_config_json());
  if (const auto* extra = dynamic_cast<const PretrainedFilesWriter*>(policy_.get()))
    for (const auto& [name, content] : extra->pretrained_files()) write_text_file((tmp / name).string(), content);
  fs::remove_all(dir, ec);
  fs::rename(tmp, dir, ec);
  if (ec) throw FormatError("cannot move " + tmp.string() + " to " + dir.string() + ": " + ec.message());
  logger()->info("merged weights (adapters folded in, lora_alpha / r = {:g}) written to {}",
                 lora_->lora_alpha / static_cast<double>(lora_->r), (dir / "model.safetensors").string());
}

std::string Trainer::unit_in_backward() const {
  const auto* sharded = dynamic_cast<const ShardedBackend*>(backend_.get());
  return sharded ? sharded->unit_in_backward() : std::string();
}

int Trainer::stop_requested() {
  CollectiveScope scope("trainer, stop check");
  return stop_signal_of_any_rank(mesh_->world(), stop_signal());
}

int Trainer::run() {
  auto log = logger();
  const double max_norm = config_.get_float("optimizer.grad_clip_norm");
  const bool save = config_.get_bool("save_checkpoint");
  const auto device = torch::Device(runtime_.device);
  policy_->train();

  double update_s = 0, data_s = 0, grad_norm = 0, lr = scheduler_->lr(start_step_);
  std::int64_t since_log = 0;           // micro-steps this process timed since the last log
  std::int64_t tokens_since_log = 0;    // their batches' tokens (a text run's)
  bool text_run = false;                // the batches hold input_ids
  std::int64_t last_logged = start_step_;
  double first_loss = 0;                       // the first logged loss, for the growth warning
  bool loss_growth_warned = false;
  const auto start = Clock::now();
  auto last_log = start;
  log->info("training from step {} to {}", start_step_, steps_);
  reset_cpu_tensor_peak();

  // An exception from LibTorch or a plugin (not a shardkit error) leaves a step naming the
  // step, its phase and, where known, the module; shardkit-train prints that as one line.
  const auto in_step = [this](std::int64_t step, const char* phase, auto&& body) -> decltype(body()) {
    try {
      return body();
    } catch (...) {
      rethrow_with_context({step, phase, std::string(phase) == "backward" ? unit_in_backward() : std::string()});
    }
  };

  for (std::int64_t step = start_step_; step < steps_; ++step) {
    const auto done = step + 1;
    const bool update = done % accum_ == 0;
    if (ledger_) ledger_->begin_step(done);
    const auto t0 = Clock::now();
    auto batch = in_step(done, "data", [&] {
      auto read = loader_->next();
      // Counted on the host, before the batch moves: a count on the device would wait for it.
      if (const auto tokens = batch_tokens(read)) {
        text_run = true;
        tokens_since_log += *tokens;
      }
      for (auto& [key, tensor] : read) tensor = tensor.to(device);
      return read;
    });
    const auto t1 = Clock::now();

    backend_->begin_micro_step(update);
    auto output = in_step(done, "forward", [&] { return backend_->forward(*policy_, batch); });
    in_step(done, "backward", [&] {
      auto scaled = step_loss_.backward_loss(output, accum_);
      if (scaler_) scaled = scaled * scaler_->scale();
      scaled.backward();
      backend_->finish_gradients();
    });
    const double loss = output.loss.item<double>();
    if (!std::isfinite(loss))
      throw RuntimeError("the loss became " + std::to_string(loss) + " at step " +
                         std::to_string(done) + "; lower --optimizer.lr or check the data");
    double step_mean = loss;
    if (update) {
      in_step(done, "optimizer step", [&] {
        lr = scheduler_->lr(step);
        if (step_loss_.summed()) {
          CollectiveScope scope("trainer, loss normalizer");
          step_mean = step_loss_.finish_step(gradients(), mesh_->dp_group());
        }
        if (unscaled_gradients_finite(step)) {
          grad_norm = backend_->clip_grad_norm(max_norm);
          optimizer_->step(lr);
          optimizer_->zero_grad();
          backend_->after_optimizer_step();
        } else {
          optimizer_->zero_grad();
        }
      });
      if (ledger_) ledger_->end_step(done, mesh_->world());
    }
    const auto t2 = Clock::now();
    data_s += seconds(t1 - t0);
    update_s += seconds(t2 - t1);
    // A summed loss is logged as the global mean of its optimizer step, once per micro-step.
    if (!step_loss_.summed())
      log_window_.loss_sum += loss;
    else if (update)
      log_window_.loss_sum += step_mean * static_cast<double>(accum_);
    for (const auto& [name, value] : output.metrics) log_window_.policy_sums[name] += value;
    ++log_window_.micro_steps;
    ++since_log;

    // Evaluation at optimizer updates; its values join that step's log line (one is forced).
    std::map<std::string, double> evaluated;
    if (eval_dataset_ && update && (done % eval_freq_ == 0 || done == steps_)) evaluated = run_evaluation(done);
    // Lines are written at optimizer updates, once a multiple of --log_freq has been passed, so
    // that each averages whole optimizer steps (with accumulation, a micro-step's own loss is
    // only part of its update's).
    const bool log_due = update && done / log_freq_ != last_logged / log_freq_;
    if (log_due || done == steps_ || !evaluated.empty()) {
      const auto now = Clock::now();
      MetricsRecord r;
      r.step = done;
      r.total_steps = steps_;
      r.first_step = start_step_;
      const auto& pos = loader_->position();
      r.epoch = static_cast<double>(pos.epoch) + static_cast<double>(pos.batch_in_epoch) /
                                                     static_cast<double>(loader_->batches_per_epoch());
      r.loss = log_window_.loss_sum / static_cast<double>(std::max<std::int64_t>(1, log_window_.micro_steps));
      r.lr = lr;
      r.grad_norm = grad_norm;
      r.samples_per_s = static_cast<double>(since_log * batch_size_) /
                        std::max(1e-9, seconds(now - last_log));
      if (text_run) r.tokens_per_s = static_cast<double>(tokens_since_log) / std::max(1e-9, seconds(now - last_log));
      r.update_s = update_s / static_cast<double>(since_log);
      r.dataloading_s = data_s / static_cast<double>(since_log);
      r.elapsed_s = seconds(now - start);
      for (const auto& [name, sum] : log_window_.policy_sums)
        r.policy[name] = sum / static_cast<double>(std::max<std::int64_t>(1, log_window_.micro_steps));
      r.policy.insert(evaluated.begin(), evaluated.end());  // the same on every rank: averaging keeps it
      log_window_.clear();
      {
        CollectiveScope scope("trainer, metrics");
        reduce_metrics(mesh_->world(), r);
      }
      if (first_loss == 0) first_loss = r.loss;
      if (!loss_growth_warned && r.loss > 100 * first_loss) {
        log->warn("the loss grew from {:.4g} to {:.4g} (x{:.0f}) by step {} at lr {:.3e}; training may be "
                  "diverging: consider a lower --optimizer.lr", first_loss, r.loss, r.loss / first_loss, done, lr);
        loss_growth_warned = true;
      }
      const auto row = metrics_row(r);
      for (const auto& l : loggers_) l->log(row);
      log->info("{}", progress_line(r));
      update_s = data_s = 0;
      since_log = tokens_since_log = 0;
      last_log = now;
      last_logged = done;
    }
    const bool saved_now = save && (done % save_freq_ == 0 || done == steps_);
    if (saved_now) save_checkpoint(done);
    if (const int sig = update && done < steps_ ? stop_requested() : 0) {
      if (save && !saved_now) save_checkpoint(done);
      for (const auto& l : loggers_) l->finish();
      log->info("{} by {} after step {}{}", sig == SIGINT ? "interrupted" : "stopped", signal_name(sig), done,
                save ? "; continue with --resume=true --output_dir=" + output_dir_
                     : " (--save_checkpoint=false: nothing saved)");
      return sig;
    }
  }
  for (const auto& l : loggers_) l->finish();
  if (lora_ && config_.get_bool("peft.merge")) save_merged_model();
  log->info("training done: {} steps in {:.1f} s", steps_ - start_step_, seconds(Clock::now() - start));
  if (cpu_tensor_counter_installed())
    log->info("peak CPU tensor memory while training: {} ({} bytes) on rank {}", format_bytes(cpu_tensor_peak()),
              cpu_tensor_peak(), runtime_.rank);
  return 0;
}

}  // namespace shardkit::train
