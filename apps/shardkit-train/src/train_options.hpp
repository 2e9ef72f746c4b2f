// The options shardkit-train itself declares, and how plugin options are namespaced.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardkit/config.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/mesh.hpp"
#include "shardkit/runtime.hpp"

namespace shardkit::train {

/// The plugins a run selects, after `auto` is resolved.
struct Selection {
  std::string policy, dataset, backend, checkpoint_format;
  std::string comm;  ///< transport plugin; used only when more than one process runs
  std::vector<std::string> loggers{"jsonl"};  ///< logger plugins, jsonl first (always on)
  /// The chosen plugin of `kind` (loggers comma-separated); "" for a kind the run does not select.
  std::string of(const std::string& kind) const;
  /// Whether the run selects plugin `name` of `kind`.
  bool selects(const std::string& kind, const std::string& name) const;
  /// Every selected plugin as (kind, name): policy, dataset, backend, format, comm (when
  /// `with_comm`: a run of several processes), loggers.
  std::vector<std::pair<std::string, std::string>> plugins(bool with_comm) const;
};

/// shardkit-train's own options (steps, batch_size, optimizer.*, ...) as read from a resolved
/// configuration. Each is declared once, in train_options.cpp's table: its name, default, help,
/// bounds and the member below that holds it (the type follows the member's). The member is the
/// option's name with '.' as '_'; an option without a default is std::optional.
struct TrainOptions {
  std::string policy_type{};  ///< --policy.type
  std::string policy_device{};  ///< --policy.device
  std::string policy_path{};  ///< --policy.path
  bool policy_push_to_hub{};  ///< --policy.push_to_hub
  std::string policy_repo_id{};  ///< --policy.repo_id
  std::string dataset_type{};  ///< --dataset.type
  std::int64_t num_workers{};  ///< --num_workers
  std::string distributed_backend{};  ///< --distributed_backend
  std::string checkpoint_format{};  ///< --checkpoint_format
  std::int64_t steps{};  ///< --steps
  std::int64_t epochs{};  ///< --epochs
  std::int64_t batch_size{};  ///< --batch_size
  std::int64_t seed{};  ///< --seed
  std::int64_t log_freq{};  ///< --log_freq
  std::int64_t eval_freq{};  ///< --eval_freq
  std::int64_t eval_steps{};  ///< --eval_steps
  std::string eval_strategy{};  ///< --eval_strategy
  std::string save_strategy{};  ///< --save_strategy
  std::int64_t save_total_limit{};  ///< --save_total_limit
  std::int64_t max_eval_samples{};  ///< --max_eval_samples
  std::int64_t env_eval_freq{};  ///< --env_eval_freq
  bool wandb_enable{};  ///< --wandb.enable
  std::string wandb_project{};  ///< --wandb.project
  std::string wandb_entity{};  ///< --wandb.entity
  std::string wandb_notes{};  ///< --wandb.notes
  std::string wandb_mode{};  ///< --wandb.mode
  bool trackio_enable{};  ///< --trackio.enable
  std::string trackio_project{};  ///< --trackio.project
  bool ema_enable{};  ///< --ema.enable
  std::optional<double> ema_decay{};  ///< --ema.decay
  std::int64_t ema_update_after_step{};  ///< --ema.update_after_step
  double ema_inv_gamma{};  ///< --ema.inv_gamma
  double ema_power{};  ///< --ema.power
  double ema_min_decay{};  ///< --ema.min_decay
  double ema_max_decay{};  ///< --ema.max_decay
  bool ema_use_for_eval{};  ///< --ema.use_for_eval
  std::string logger_type{};  ///< --logger.type
  std::optional<bool> checkpoint_verify{};  ///< --checkpoint.verify
  std::string checkpoint_async_mode{};      ///< --checkpoint.async_mode
  std::string checkpoint_on_error{};        ///< --checkpoint.on_error
  std::int64_t save_freq{};  ///< --save_freq
  bool save_checkpoint{};  ///< --save_checkpoint
  std::string output_dir{};  ///< --output_dir
  std::string job_name{};  ///< --job_name
  bool resume{};  ///< --resume
  bool print_config{};  ///< --print_config
  bool dry_run{};  ///< --dry_run
  bool log_all_ranks{};  ///< --log_all_ranks
  std::int64_t num_threads{};  ///< --num_threads
  std::string plugins{};  ///< --plugins
  std::string plugin_path{};  ///< --plugin_path
  std::string optimizer_type{};  ///< --optimizer.type
  double optimizer_lr{};  ///< --optimizer.lr
  double optimizer_beta1{};  ///< --optimizer.beta1
  double optimizer_beta2{};  ///< --optimizer.beta2
  double optimizer_eps{};  ///< --optimizer.eps
  double optimizer_weight_decay{};  ///< --optimizer.weight_decay
  double optimizer_grad_clip_norm{};  ///< --optimizer.grad_clip_norm
  std::string scheduler_type{};  ///< --scheduler.type
  std::int64_t scheduler_num_warmup_steps{};  ///< --scheduler.num_warmup_steps
  double scheduler_warmup_ratio{};  ///< --scheduler.warmup_ratio
  std::int64_t scheduler_num_decay_steps{};  ///< --scheduler.num_decay_steps
  double scheduler_decay_lr{};  ///< --scheduler.decay_lr
  std::string accelerator_mixed_precision{};  ///< --accelerator.mixed_precision
  double accelerator_fp16_init_scale{};  ///< --accelerator.fp16.init_scale
  std::int64_t accelerator_fp16_growth_interval{};  ///< --accelerator.fp16.growth_interval
  std::int64_t accelerator_gradient_accumulation_steps{};  ///< --accelerator.gradient_accumulation.steps
  std::string accelerator_activation_checkpointing_mode{};  ///< --accelerator.activation_checkpointing.mode
  std::int64_t accelerator_activation_checkpointing_every{};  ///< --accelerator.activation_checkpointing.every
  std::string peft_method_type{};  ///< --peft.method_type
  std::int64_t peft_r{};  ///< --peft.r
  double peft_lora_alpha{};  ///< --peft.lora_alpha
  double peft_lora_dropout{};  ///< --peft.lora_dropout
  std::string peft_target_modules{};  ///< --peft.target_modules
  std::string peft_full_training_modules{};  ///< --peft.full_training_modules
  std::string peft_adapter_path{};  ///< --peft.adapter_path
  bool peft_merge{};  ///< --peft.merge
  std::int64_t parallelism_dp_replicate{};  ///< --parallelism.dp_replicate
  std::int64_t parallelism_dp_shard{};  ///< --parallelism.dp_shard
  std::string distributed_comm{};  ///< --distributed.comm
  double distributed_timeout_s{};  ///< --distributed.timeout_s
  bool distributed_collective_ledger{};  ///< --distributed.collective_ledger
  bool distributed_check_collectives{};  ///< --distributed.check_collectives

  /// The values of `config` (resolved and valid: every option has its value or default).
  static TrainOptions from(const Config& config);
};

/// shardkit-train's own option specs, from the same table.
const std::vector<OptionSpec>& core_options();

/// The default of shardkit-train's option `name`, as written on the command line ("" for an
/// option without one). Throws std::logic_error for a name the table does not declare.
std::string default_of(const std::string& name);

/// The flag prefix of a plugin's options: "policy.", "dataset.", "accelerator.<name>.",
/// "checkpoint.<name>." (the kind table's).
std::string option_prefix(const std::string& kind, const std::string& name);

/// What a plugin of `kind` called `name` gets from shardkit-train: its options (under
/// option_prefix), the whole configuration, the logger and the runtime (no mesh).
PluginContext plugin_context(const Config& config, const Runtime& runtime, const std::string& kind,
                             const std::string& name);

/// Core options + the selected plugins' options + the other plugins' options as inactive.
/// When `only_selected_help` is set, nothing is marked inactive (used for --help).
Schema build_schema(const Registry& registry, const Selection& selection);

/// The Trait bits plugin `name` of `kind` declares (0 when it is not installed).
std::uint32_t traits_of(const Registry& registry, const std::string& kind, const std::string& name);

/// Resolves distributed_backend=auto for the mesh: single for one process, ddp when
/// nothing is sharded, fsdp otherwise (an error saying so when no installed backend shards
/// parameters). Unknown names are left for Registry::get to report.
std::string resolve_backend(const std::string& requested, const MeshShape& mesh,
                            const Registry& registry);

/// Refuses, at start-up, a selection whose plugins' traits cannot work together: a backend
/// that does not shard on a sharded mesh, a one-process backend under a launcher, a checkpoint
/// format that cannot hold the sharded states of a sharding backend (when checkpoints are
/// saved). Throws ConfigError.
void check_traits(const Registry& registry, const Selection& selection, const MeshShape& mesh,
                  bool multi_process, bool saves_checkpoints, const std::string& requested_backend);

/// The logger plugins --logger.type=a,b names, jsonl first and always (it writes metrics.jsonl),
/// each once.
std::vector<std::string> resolve_loggers(const std::string& requested);

/// Resolves distributed.comm=auto for the policy's device: gloo (cpu) or nccl (cuda).
std::string resolve_comm(const std::string& requested, const std::string& device);

}  // namespace shardkit::train
