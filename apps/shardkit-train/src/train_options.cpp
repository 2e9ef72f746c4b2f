// shardkit-train's own option table and the schema that joins it with the plugins' options.
#include "train_options.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <type_traits>

#include "shardkit/comma_list.hpp"
#include "shardkit/error.hpp"
#include "shardkit/logging.hpp"
#include "shardkit/plugin_kinds.hpp"

namespace shardkit::train {

namespace {

/// One option of TrainOptions: its spec and how its value reaches its member.
struct OptionBinding {
  OptionSpec spec;
  std::function<void(const Config&, TrainOptions&)> read;
};

template <class T>
constexpr OptionType option_type() {
  if constexpr (std::is_same_v<T, std::string>) return OptionType::String;
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::optional<bool>>) return OptionType::Bool;
  if constexpr (std::is_same_v<T, std::int64_t>) return OptionType::Int;
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::optional<double>>) return OptionType::Float;
}

template <class T>
T value_of(const Config& config, const char* name) {
  if constexpr (std::is_same_v<T, std::string>) return config.get_string(name);
  if constexpr (std::is_same_v<T, bool>) return config.get_bool(name);
  if constexpr (std::is_same_v<T, std::optional<bool>>)
    return config.has(name) ? std::optional(config.get_bool(name)) : std::nullopt;
  if constexpr (std::is_same_v<T, std::int64_t>) return config.get_int(name);
  if constexpr (std::is_same_v<T, double>) return config.get_float(name);
  if constexpr (std::is_same_v<T, std::optional<double>>)
    return config.has(name) ? std::optional(config.get_float(name)) : std::nullopt;
}

template <class T>
OptionBinding option(const char* name, T TrainOptions::*member, const char* default_value, const char* help,
                   const char* min = nullptr, const char* max = nullptr, const char* choices = nullptr) {
  return {{name, option_type<T>(), default_value, help, min, max, choices},
          [name, member](const Config& config, TrainOptions& options) {
            options.*member = value_of<T>(config, name);
          }};
}

using O = TrainOptions;
const std::vector<OptionBinding> kBindings = {
    option("policy.type", &O::policy_type, "mlp", "Policy plugin to train"),
    option("policy.device", &O::policy_device, "cpu", "Torch device: cpu or cuda (cuda:LOCAL_RANK per process)"),
    option("policy.path", &O::policy_path, "", "Start from the weights in this pretrained_model folder"),
    option("policy.push_to_hub", &O::policy_push_to_hub, "false", "LeRobot's upload switch: shardkit never uploads, so only false is accepted (a no-op)"),
    option("policy.repo_id", &O::policy_repo_id, "", "LeRobot's Hub repository to push to: accepted and ignored, as shardkit never uploads"),
    option("dataset.type", &O::dataset_type, "synthetic", "Dataset plugin to read; --dataset.repo_id alone selects lerobot"),
    option("num_workers", &O::num_workers, "0", "LeRobot's data-loader workers: sets --dataset.num_workers when the dataset has that option (lerobot), else ignored with a notice", "0"),
    option("distributed_backend", &O::distributed_backend, "auto", "Backend plugin (or an alias, e.g. deepspeed); auto = the preferred backend that fits the mesh: one process, replicas, or sharded (single, ddp, fsdp)"),
    option("checkpoint_format", &O::checkpoint_format, "safetensors", "Checkpoint format plugin"),
    option("steps", &O::steps, "1000", "Loop steps (micro-batches per process) to train for", "1"),
    option("epochs", &O::epochs, "0", "Train for this many passes over the dataset instead of --steps (0: --steps decides); rounded up to whole optimizer updates", "0"),
    option("batch_size", &O::batch_size, "8", "Samples per micro-batch per process", "1"),
    option("seed", &O::seed, "1000", "Seed of model initialisation, data order and the synthetic task", "0"),
    option("log_freq", &O::log_freq, "100", "Log every N loop steps", "1"),
    option("eval_freq", &O::eval_freq, "0", "Evaluate every N loop steps (at optimizer updates) and at the last step on the dataset's validation split (--dataset.split=validation): mean loss and perplexity; 0 = no evaluation", "0"),
    option("eval_steps", &O::eval_steps, "0", "LeRobot main's offline evaluation: eval_loss every N steps (at optimizer updates) on the episodes --dataset.eval_split holds out (other datasets: their validation split); 0 = none", "0"),
    option("eval_strategy", &O::eval_strategy, "steps", "steps: evaluate as --eval_freq/--eval_steps say; epoch: at the end of each epoch and at the last step (transformers' eval_strategy, AITraining's default)", nullptr, nullptr, "steps|epoch"),
    option("max_eval_samples", &O::max_eval_samples, "0", "Evaluate on at most this many samples (lerobot: max(1, N / tasks) frames of each task, as LeRobot main; others: the first N); 0 = all", "0"),
    option("env_eval_freq", &O::env_eval_freq, "0", "LeRobot main's simulation-rollout frequency (LeRobot 0.6.1's --eval_freq): accepted and ignored, as shardkit runs no simulation environment; evaluate offline with --eval_steps", "0"),
    option("wandb.enable", &O::wandb_enable, "false", "LeRobot's Weights & Biases switch: shardkit has no wandb logger, so only false is accepted (a no-op); see --logger.type"),
    option("wandb.project", &O::wandb_project, "", "LeRobot's Weights & Biases project: accepted and ignored (nothing is sent)"),
    option("wandb.entity", &O::wandb_entity, "", "LeRobot's Weights & Biases entity: accepted and ignored (nothing is sent)"),
    option("wandb.notes", &O::wandb_notes, "", "LeRobot's Weights & Biases notes: accepted and ignored (nothing is sent)"),
    option("wandb.mode", &O::wandb_mode, "", "LeRobot's Weights & Biases mode (online, offline, disabled): accepted and ignored (nothing is sent)"),
    option("trackio.enable", &O::trackio_enable, "false", "LeRobot's trackio switch: record the run in trackio's local store ($TRACKIO_DIR, else ~/.cache/huggingface/trackio; see trackio show), through the trackio logger plugin (as --logger.type=jsonl,trackio)"),
    option("trackio.project", &O::trackio_project, "lerobot", "LeRobot's trackio project: sets --logger.trackio.project; the run is named after --job_name"),
    option("logger.type", &O::logger_type, "jsonl", "Logger plugins, comma-separated: jsonl (metrics.jsonl, always on), tensorboard (event files in <output_dir>/tensorboard), trackio (its local store; --trackio.enable=true adds it)"),
    option("checkpoint.verify", &O::checkpoint_verify, "", "On resume, check every file of the checkpoint against the checksums of its manifest.json; unset = do so when the checkpoint has a manifest, false = compare sizes only (faster on large checkpoints), true = also refuse a checkpoint without a manifest"),
    option("checkpoint.async_mode", &O::checkpoint_async_mode, "disabled", "disabled: a save blocks training until every file is written and published; async: the saving step copies the state into host buffers and training goes on while a background writer per rank writes and publishes it (torchtitan's async_mode; one save in flight, the next save, a stop signal and the end of training wait for it); async_with_pinned_mem = async (the buffers of CUDA state are always pinned)", nullptr, nullptr, "disabled|async|async_with_pinned_mem"),
    option("checkpoint.on_error", &O::checkpoint_on_error, "stop", "What a failed background save does (--checkpoint.async_mode=async): stop = every rank stops at the next step with the path and the reason (non-zero exit), warn = a warning, training goes on; `last` stays on the newest complete checkpoint either way", nullptr, nullptr, "stop|warn"),
    option("save_freq", &O::save_freq, "1000", "Checkpoint every N loop steps (a multiple of the accumulation steps; 0 = at the last step only); the last step is always saved", "0"),
    option("save_strategy", &O::save_strategy, "steps", "steps: checkpoint as --save_freq says; epoch: at the end of each epoch (the first optimizer update at or after it) and at the last step (transformers' save_strategy)", nullptr, nullptr, "steps|epoch"),
    option("save_total_limit", &O::save_total_limit, "0", "Keep the newest N checkpoints, removing older ones once a newer one is published (never the one `last` points to); 0 = keep all (the Hugging Face Trainer's save_total_limit)", "0"),
    option("save_checkpoint", &O::save_checkpoint, "true", "Write checkpoints at all"),
    option("output_dir", &O::output_dir, "", "Run folder; empty = outputs/train/<date>/<time>_<job_name>"),
    option("job_name", &O::job_name, "", "Name of the run; empty = the policy type"),
    option("resume", &O::resume, "false", "Continue the run whose train_config.json is --config_path (or <output_dir>/checkpoints/last)"),
    option("print_config", &O::print_config, "false", "Print every resolved option with where its value came from (default, config file and line, flag, environment, saved config) and exit, without training or creating the output folder"),
    option("dry_run", &O::dry_run, "false", "Print the per-rank memory plan for the backend and degrees given (--parallelism.*) and exit, without training or other processes"),
    option("log_all_ranks", &O::log_all_ranks, "false", "Print info lines from every rank (default: rank 0 only; every rank prints its warnings and errors)"),
    option("num_threads", &O::num_threads, "0", "Intra-op threads per process (0 = LibTorch's default)", "0"),
    option("plugins", &O::plugins, "", "Extra plugin files, comma-separated (win over same-named plugins found elsewhere)"),
    option("plugin_path", &O::plugin_path, "", "Extra plugin folders, colon-separated"),
    option("optimizer.type", &O::optimizer_type, "adamw", "Optimizer", nullptr, nullptr, "adamw"),
    option("optimizer.lr", &O::optimizer_lr, "0.001", "Peak learning rate", "0"),
    option("optimizer.beta1", &O::optimizer_beta1, "0.9", "AdamW beta1", "0", "0.999999"),
    option("optimizer.beta2", &O::optimizer_beta2, "0.999", "AdamW beta2", "0", "0.999999"),
    option("optimizer.eps", &O::optimizer_eps, "1e-08", "AdamW epsilon", "0"),
    option("optimizer.weight_decay", &O::optimizer_weight_decay, "0.01", "Decoupled weight decay", "0"),
    option("optimizer.grad_clip_norm", &O::optimizer_grad_clip_norm, "10.0", "Clip the global gradient norm to this (0 = no clipping)", "0"),
    option("scheduler.type", &O::scheduler_type, "constant", "Learning-rate schedule: constant or cosine (LeRobot's, warmup from lr/(warmup+1)), linear (transformers' linear decay to 0, warmup from 0)", nullptr, nullptr, "constant|cosine|linear"),
    option("scheduler.num_warmup_steps", &O::scheduler_num_warmup_steps, "0", "Linear warmup length in loop steps", "0"),
    option("scheduler.warmup_ratio", &O::scheduler_warmup_ratio, "0.0", "Warmup as a fraction of the run's steps, rounded up (transformers' warmup_ratio); instead of --scheduler.num_warmup_steps", "0", "1"),
    option("scheduler.num_decay_steps", &O::scheduler_num_decay_steps, "0", "Cosine or linear decay length in loop steps (0 = --steps)", "0"),
    option("scheduler.decay_lr", &O::scheduler_decay_lr, "0.0", "Learning rate at the end of the cosine decay", "0"),
    option("accelerator.mixed_precision", &O::accelerator_mixed_precision, "no", "Mixed precision: no (fp32), bf16, or fp16 (with a dynamic loss scaler); the optimizer steps fp32 masters and checkpoints save them", nullptr, nullptr, "no|bf16|fp16"),
    option("accelerator.fp16.init_scale", &O::accelerator_fp16_init_scale, "65536", "fp16: the loss scale to start from", "1"),
    option("accelerator.fp16.growth_interval", &O::accelerator_fp16_growth_interval, "2000", "fp16: double the loss scale after this many updates without overflow", "1"),
    option("accelerator.gradient_accumulation.steps", &O::accelerator_gradient_accumulation_steps, "1", "Micro-batches per optimizer update", "1"),
    option("accelerator.activation_checkpointing.mode", &O::accelerator_activation_checkpointing_mode, "none", "Activation checkpointing of the wrap units (the policy's, or --accelerator.<backend>.wrap_modules): none; full (every unit keeps only its inputs and runs its forward again in backward: less memory, about one more forward per step); selective (every k-th unit, --accelerator.activation_checkpointing.every)", nullptr, nullptr, "none|full|selective"),
    option("accelerator.activation_checkpointing.every", &O::accelerator_activation_checkpointing_every, "2", "selective: checkpoint the k-th, 2k-th, ... wrap unit", "1"),
    option("peft.method_type", &O::peft_method_type, "", "PEFT method: LORA, the only one shardkit has (adapters on a frozen --policy.path base, saved as PEFT's adapter_model.safetensors); empty = no PEFT, unless another --peft.* option is given, which means LORA"),
    option("peft.r", &O::peft_r, "16", "LoRA rank", "1"),
    option("peft.lora_alpha", &O::peft_lora_alpha, "8", "LoRA alpha: the adapters are scaled by lora_alpha / r (PEFT's default, 8)", "0"),
    option("peft.lora_dropout", &O::peft_lora_dropout, "0.0", "Dropout on the LoRA adapters' input in training", "0", "0.999"),
    option("peft.target_modules", &O::peft_target_modules, "", "Modules that get LoRA adapters: comma-separated module-name suffixes (q_proj,v_proj) or all-linear (every LoRA-capable linear layer but lm_head; attention modules only when named); empty = the policy's default (llama: q_proj,v_proj; act: its encoder and decoder attention, state projections and action head)"),
    option("peft.full_training_modules", &O::peft_full_training_modules, "", "Modules trained whole beside the adapters, comma-separated name suffixes (PEFT's modules_to_save, e.g. lm_head)"),
    option("peft.adapter_path", &O::peft_adapter_path, "", "A LoRA adapter to train further (the pretrained_model folder of a LoRA run's checkpoint) on the --policy.path base, as PEFT's is_trainable=True; --policy.path=<that folder> alone sets both, the base from its adapter_config.json's base_model_name_or_path and the --peft.* options not given from its LoRA options"),
    option("peft.merge", &O::peft_merge, "false", "At the end of training also write the merged full weights (W + B A lora_alpha / r) as <output_dir>/merged_model/model.safetensors with config.json, which transformers loads"),
    option("parallelism.dp_replicate", &O::parallelism_dp_replicate, "1", "Data-parallel replicas (untouched degrees on W processes = W replicas, plain DDP)", "1"),
    option("parallelism.dp_shard", &O::parallelism_dp_shard, "1", "Ranks each parameter is sharded over (-1 = fill the world size)", "-1"),
    option("distributed.comm", &O::distributed_comm, "auto", "Transport plugin (comm kind); auto = gloo for cpu, nccl for cuda"),
    option("distributed.timeout_s", &O::distributed_timeout_s, "600", "Seconds any collective or rendezvous may wait before the run fails", "0.1"),
    option("distributed.collective_ledger", &O::distributed_collective_ledger, "true", "Record every rank's collectives; a stuck or mismatched one is reported naming the ranks (docs/distributed.md)"),
    option("distributed.check_collectives", &O::distributed_check_collectives, "true", "Compare the ranks' collective sequences at every optimizer step (one small all-reduce); needs the ledger"),
    // LeRobot main's EMAConfig; its checks (ema_option_errors) word the refusals as LeRobot does, so no bounds here.
    option("ema.enable", &O::ema_enable, "false", "Keep an exponential moving average of the weights the optimizer steps (diffusers' EMAModel with warmup, as LeRobot main); checkpoints then also hold pretrained_model_ema/ (the averaged weights, loadable with --policy.path) and training_state/ema_state.pt"),
    option("ema.decay", &O::ema_decay, "", "A constant decay instead of the warmup schedule's clamp (sets both ema.min_decay and ema.max_decay; give neither with it), e.g. 0.99 as openpi; unset = the schedule"),
    option("ema.update_after_step", &O::ema_update_after_step, "0", "Optimizer updates during which the average stays a copy of the weights (decay 0 while update <= this + 1)"),
    option("ema.inv_gamma", &O::ema_inv_gamma, "1.0", "Warmup schedule: decay = 1 - (1 + t / inv_gamma) ^ -power, t counting updates after ema.update_after_step + 1"),
    option("ema.power", &O::ema_power, "0.75", "Warmup schedule's power (diffusers: 3/4 for shorter runs, 2/3 for a million steps or more)"),
    option("ema.min_decay", &O::ema_min_decay, "0.0", "Lower clamp of the warmup schedule's decay"),
    option("ema.max_decay", &O::ema_max_decay, "0.9999", "Upper clamp of the warmup schedule's decay"),
    option("ema.use_for_eval", &O::ema_use_for_eval, "true", "LeRobot main's switch for evaluating the averaged weights in simulation rollouts, which shardkit does not run: accepted; the offline evaluation loss uses the live weights, as LeRobot's"),
};
}  // namespace

const std::vector<OptionSpec>& core_options() {
  static const auto specs = [] {
    std::vector<OptionSpec> out;
    for (const auto& binding : kBindings) out.push_back(binding.spec);
    return out;
  }();
  return specs;
}

std::string default_of(const std::string& name) {
  for (const auto& binding : kBindings)
    if (name == binding.spec.name) return binding.spec.default_value;
  throw std::logic_error("shardkit-train declares no option '" + name + "'");
}

TrainOptions TrainOptions::from(const Config& config) {
  TrainOptions options;
  for (const auto& binding : kBindings) binding.read(config, options);
  return options;
}

std::string option_prefix(const std::string& kind, const std::string& name) {
  const auto* k = find_plugin_kind(kind);
  return k ? k->option_prefix(name) : kind + "." + name + ".";
}

PluginContext plugin_context(const Config& config, const Runtime& runtime, const std::string& kind,
                             const std::string& name) {
  PluginContext ctx;
  ctx.options = config.section(option_prefix(kind, name));
  ctx.full_config = &config;
  ctx.logger = logger();
  ctx.runtime = &runtime;
  return ctx;
}

std::string Selection::of(const std::string& kind) const {
  if (kind == "policy") return policy;
  if (kind == "dataset") return dataset;
  if (kind == "backend") return backend;
  if (kind == "checkpoint_format") return checkpoint_format;
  if (kind == "comm") return comm;
  if (kind == "logger") return join_list(loggers, ",");
  return "";
}

std::vector<std::pair<std::string, std::string>> Selection::plugins(bool with_comm) const {
  std::vector<std::pair<std::string, std::string>> out{
      {"policy", policy}, {"dataset", dataset}, {"backend", backend}, {"checkpoint_format", checkpoint_format}};
  if (with_comm && !comm.empty()) out.emplace_back("comm", comm);
  for (const auto& name : loggers) out.emplace_back("logger", name);
  return out;
}

bool Selection::selects(const std::string& kind, const std::string& name) const {
  if (kind == "logger") return std::find(loggers.begin(), loggers.end(), name) != loggers.end();
  return of(kind) == name;
}

std::vector<std::string> resolve_loggers(const std::string& requested) {
  std::vector<std::string> names{"jsonl"};
  std::string name;
  for (std::size_t at = 0; at <= requested.size(); ++at) {
    const char c = at < requested.size() ? requested[at] : ',';
    if (c != ',') {
      if (c != ' ') name += c;
      continue;
    }
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    name.clear();
  }
  return names;
}

Schema build_schema(const Registry& registry, const Selection& selection) {
  Schema schema;
  schema.add("", core_options().data(), core_options().size(), "core");
  schema.allow_extra("config_path");
  schema.allow_extra("help");
  for (const auto& kind : plugin_kind_table()) {
    const auto chosen = selection.of(kind.name);
    if (chosen.empty()) continue;
    for (const auto& name : registry.names(kind.name)) {
      const auto* d = registry.find(kind.name, name)->descriptor;
      const std::string owner = kind.name + " '" + name + "'";
      if (selection.selects(kind.name, name))
        schema.add(kind.option_prefix(name), d->options, d->num_options, owner);
      else
        schema.add_inactive(kind.option_prefix(name), d->options, d->num_options, owner,
                            kind.selector + "=" + chosen);
    }
  }
  return schema;
}

std::uint32_t traits_of(const Registry& registry, const std::string& kind, const std::string& name) {
  const auto* plugin = registry.find(kind, name);
  return plugin ? plugin->descriptor->traits : 0;
}

namespace {

/// The installed plugins of `kind` with (or without) a trait, comma-separated, for
/// messages; "" when none.
std::string plugins_where(const Registry& registry, const std::string& kind, Trait trait, bool has) {
  std::vector<std::string> names;
  for (const auto& name : registry.names(kind))
    if (((traits_of(registry, kind, name) & trait) != 0) == has) names.push_back(name);
  return join_list(names, ", ");
}

/// As plugins_where for backends, "none" when none.
std::string backends_where(const Registry& registry, Trait trait, bool has) {
  const auto names = plugins_where(registry, "backend", trait, has);
  return names.empty() ? "none" : names;
}

}  // namespace

std::string resolve_backend(const std::string& requested, const MeshShape& mesh, const Registry& registry) {
  if (requested != "auto") return requested;
  // What fits the mesh: one process; replicas only; sharded parameters. Among those, a backend
  // preferred by auto (single, ddp and fsdp, LeRobot's choice for a sharded mesh), else name order.
  const auto fits = [&](std::uint32_t traits) {
    if (mesh.world_size() == 1) return (traits & kMultiProcess) == 0;
    if (mesh.dp_shard == 1) return (traits & kMultiProcess) != 0 && (traits & kShardsParameters) == 0;
    return (traits & kShardsParameters) != 0;
  };
  std::string first, preferred;
  for (const auto& name : registry.names("backend")) {
    const auto traits = traits_of(registry, "backend", name);
    if (!fits(traits)) continue;
    if (first.empty()) first = name;
    if (preferred.empty() && (traits & kPreferredByAuto)) preferred = name;
  }
  if (!preferred.empty()) return preferred;
  if (!first.empty()) return first;
  if (mesh.world_size() == 1)
    throw ConfigError("--distributed_backend=auto on one process needs a single-process backend, and none is "
                      "installed (installed: " + backends_where(registry, kMultiProcess, true) +
                      "); start the run under shardkit-run, or load one with --plugins=PATH.so");
  if (mesh.dp_shard == 1)
    throw ConfigError("--distributed_backend=auto with replicas only (--parallelism.dp_shard=1) needs a "
                      "data-parallel backend, and none is installed (installed: " +
                      join_list(registry.names("backend"), ", ") +
                      "); name one with --distributed_backend, or load one with --plugins=PATH.so");
  throw ConfigError("--parallelism.dp_shard=" + std::to_string(mesh.dp_shard) +
                    " shards parameters, but no installed backend shards them (installed: " +
                    backends_where(registry, kShardsParameters, false) +
                    "); use --parallelism.dp_shard=1 (data parallel, replicas only), or load a sharded "
                    "backend plugin with --plugins=PATH.so");
}

void check_traits(const Registry& registry, const Selection& selection, const MeshShape& mesh,
                  bool multi_process, bool saves_checkpoints, const std::string& requested_backend) {
  const auto backend = traits_of(registry, "backend", selection.backend);
  const std::string flag = "--distributed_backend=" + selection.backend +
                           (requested_backend == "auto" ? " (from --distributed_backend=auto)" : "");
  if (multi_process && !(backend & kMultiProcess))
    throw ConfigError(flag + " runs one process, but this run has WORLD_SIZE=" + std::to_string(mesh.world_size()) +
                      " processes; two processes must never train two models into one folder: use "
                      "--distributed_backend=auto (or one of: " +
                      backends_where(registry, kMultiProcess, true) + ") under a launcher, or start one process");
  if (mesh.dp_shard > 1 && !(backend & kShardsParameters))
    throw ConfigError(flag + " replicates the whole model, but the mesh asks for --parallelism.dp_shard=" +
                      std::to_string(mesh.dp_shard) + "; use a backend that shards parameters (installed: " +
                      backends_where(registry, kShardsParameters, true) + ") or --parallelism.dp_shard=1");
  const auto format = traits_of(registry, "checkpoint_format", selection.checkpoint_format);
  if (saves_checkpoints && (backend & kShardsParameters) && !(format & kAcceptsShardedState)) {
    const auto sharded = plugins_where(registry, "checkpoint_format", kAcceptsShardedState, true);
    throw ConfigError("--checkpoint_format=" + selection.checkpoint_format +
                      " saves whole tensors only, but backend '" + selection.backend +
                      "' shards them; use --checkpoint_format=" + (sharded.empty() ? "dcp" : sharded) +
                      " (convert to safetensors afterwards with shardkit-convert-dcp), or "
                      "--save_checkpoint=false");
  }
}

std::string resolve_comm(const std::string& requested, const std::string& device) {
  if (requested != "auto") return requested;
  return device.rfind("cuda", 0) == 0 ? "nccl" : "gloo";
}

}  // namespace shardkit::train
