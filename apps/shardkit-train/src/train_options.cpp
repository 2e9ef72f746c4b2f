// shardkit-train's own option table and the schema that joins it with the plugins' options.
#include "train_options.hpp"

#include <algorithm>

#include "shardkit/comma_list.hpp"
#include "shardkit/error.hpp"
#include "shardkit/logging.hpp"
#include "shardkit/plugin_kinds.hpp"

namespace shardkit::train {

namespace {
using T = OptionType;
const std::vector<OptionSpec> kCoreOptions = {
    {"policy.type", T::String, "mlp", "Policy plugin to train", nullptr, nullptr, nullptr},
    {"policy.device", T::String, "cpu", "Torch device: cpu or cuda (cuda:LOCAL_RANK per process)", nullptr, nullptr, nullptr},
    {"policy.path", T::String, "", "Start from the weights in this pretrained_model folder", nullptr, nullptr, nullptr},
    {"policy.push_to_hub", T::Bool, "false", "LeRobot's upload switch: shardkit never uploads, so only false is accepted (a no-op)", nullptr, nullptr, nullptr},
    {"policy.repo_id", T::String, "", "LeRobot's Hub repository to push to: accepted and ignored, as shardkit never uploads", nullptr, nullptr, nullptr},
    {"dataset.type", T::String, "synthetic", "Dataset plugin to read; --dataset.repo_id alone selects lerobot", nullptr, nullptr, nullptr},
    {"num_workers", T::Int, "0", "LeRobot's data-loader workers: sets --dataset.num_workers when the dataset has that option (lerobot), else ignored with a notice", "0", nullptr, nullptr},
    {"distributed_backend", T::String, "auto", "Backend plugin (or an alias, e.g. deepspeed); auto = the preferred backend that fits the mesh: one process, replicas, or sharded (single, ddp, fsdp)", nullptr, nullptr, nullptr},
    {"checkpoint_format", T::String, "safetensors", "Checkpoint format plugin", nullptr, nullptr, nullptr},
    {"steps", T::Int, "1000", "Loop steps (micro-batches per process) to train for", "1", nullptr, nullptr},
    {"epochs", T::Int, "0", "Train for this many passes over the dataset instead of --steps (0: --steps decides); rounded up to whole optimizer updates", "0", nullptr, nullptr},
    {"batch_size", T::Int, "8", "Samples per micro-batch per process", "1", nullptr, nullptr},
    {"seed", T::Int, "1000", "Seed of model initialisation, data order and the synthetic task", "0", nullptr, nullptr},
    {"log_freq", T::Int, "100", "Log every N loop steps", "1", nullptr, nullptr},
    {"eval_freq", T::Int, "0", "Evaluate every N loop steps (at optimizer updates) on the dataset's validation split (--dataset.split=validation): mean loss and perplexity; 0 = no evaluation", "0", nullptr, nullptr},
    {"wandb.enable", T::Bool, "false", "LeRobot's Weights & Biases switch: shardkit has no wandb logger, so only false is accepted (a no-op); see --logger.type", nullptr, nullptr, nullptr},
    {"wandb.project", T::String, "", "LeRobot's Weights & Biases project: accepted and ignored (nothing is sent)", nullptr, nullptr, nullptr},
    {"wandb.entity", T::String, "", "LeRobot's Weights & Biases entity: accepted and ignored (nothing is sent)", nullptr, nullptr, nullptr},
    {"wandb.notes", T::String, "", "LeRobot's Weights & Biases notes: accepted and ignored (nothing is sent)", nullptr, nullptr, nullptr},
    {"wandb.mode", T::String, "", "LeRobot's Weights & Biases mode (online, offline, disabled): accepted and ignored (nothing is sent)", nullptr, nullptr, nullptr},
    {"logger.type", T::String, "jsonl", "Logger plugins, comma-separated: jsonl (metrics.jsonl, always on), tensorboard (event files in <output_dir>/tensorboard)", nullptr, nullptr, nullptr},
    {"checkpoint.verify", T::Bool, "", "On resume, check every file of the checkpoint against the checksums of its manifest.json; unset = do so when the checkpoint has a manifest, false = compare sizes only (faster on large checkpoints), true = also refuse a checkpoint without a manifest", nullptr, nullptr, nullptr},
    {"save_freq", T::Int, "1000", "Checkpoint every N loop steps (a multiple of the accumulation steps); the last step is always saved", "1", nullptr, nullptr},
    {"save_checkpoint", T::Bool, "true", "Write checkpoints at all", nullptr, nullptr, nullptr},
    {"output_dir", T::String, "", "Run folder; empty = outputs/train/<date>/<time>_<job_name>", nullptr, nullptr, nullptr},
    {"job_name", T::String, "", "Name of the run; empty = the policy type", nullptr, nullptr, nullptr},
    {"resume", T::Bool, "false", "Continue the run whose train_config.json is --config_path (or <output_dir>/checkpoints/last)", nullptr, nullptr, nullptr},
    {"print_config", T::Bool, "false", "Print every resolved option with where its value came from (default, config file and line, flag, environment, saved config) and exit, without training or creating the output folder", nullptr, nullptr, nullptr},
    {"dry_run", T::Bool, "false", "Print the per-rank memory plan for the backend and degrees given (--parallelism.*) and exit, without training or other processes", nullptr, nullptr, nullptr},
    {"log_all_ranks", T::Bool, "false", "Print info lines from every rank (default: rank 0 only; every rank prints its warnings and errors)", nullptr, nullptr, nullptr},
    {"num_threads", T::Int, "0", "Intra-op threads per process (0 = LibTorch's default)", "0", nullptr, nullptr},
    {"plugins", T::String, "", "Extra plugin files, comma-separated (win over same-named plugins found elsewhere)", nullptr, nullptr, nullptr},
    {"plugin_path", T::String, "", "Extra plugin folders, colon-separated", nullptr, nullptr, nullptr},
    {"optimizer.type", T::String, "adamw", "Optimizer", nullptr, nullptr, "adamw"},
    {"optimizer.lr", T::Float, "0.001", "Peak learning rate", "0", nullptr, nullptr},
    {"optimizer.beta1", T::Float, "0.9", "AdamW beta1", "0", "0.999999", nullptr},
    {"optimizer.beta2", T::Float, "0.999", "AdamW beta2", "0", "0.999999", nullptr},
    {"optimizer.eps", T::Float, "1e-08", "AdamW epsilon", "0", nullptr, nullptr},
    {"optimizer.weight_decay", T::Float, "0.01", "Decoupled weight decay", "0", nullptr, nullptr},
    {"optimizer.grad_clip_norm", T::Float, "10.0", "Clip the global gradient norm to this (0 = no clipping)", "0", nullptr, nullptr},
    {"scheduler.type", T::String, "constant", "Learning-rate schedule", nullptr, nullptr, "constant|cosine"},
    {"scheduler.num_warmup_steps", T::Int, "0", "Linear warmup length in loop steps", "0", nullptr, nullptr},
    {"scheduler.num_decay_steps", T::Int, "0", "Cosine decay length in loop steps (0 = --steps)", "0", nullptr, nullptr},
    {"scheduler.decay_lr", T::Float, "0.0", "Learning rate at the end of the cosine decay", "0", nullptr, nullptr},
    {"accelerator.mixed_precision", T::String, "no", "Mixed precision: no (fp32), bf16, or fp16 (with a dynamic loss scaler); the optimizer steps fp32 masters and checkpoints save them", nullptr, nullptr, "no|bf16|fp16"},
    {"accelerator.fp16.init_scale", T::Float, "65536", "fp16: the loss scale to start from", "1", nullptr, nullptr},
    {"accelerator.fp16.growth_interval", T::Int, "2000", "fp16: double the loss scale after this many updates without overflow", "1", nullptr, nullptr},
    {"accelerator.gradient_accumulation.steps", T::Int, "1", "Micro-batches per optimizer update", "1", nullptr, nullptr},
    {"peft.method_type", T::String, "", "PEFT method: LORA, the only one shardkit has (adapters on a frozen --policy.path base, saved as PEFT's adapter_model.safetensors); empty = no PEFT, unless another --peft.* option is given, which means LORA", nullptr, nullptr, nullptr},
    {"peft.r", T::Int, "16", "LoRA rank", "1", nullptr, nullptr},
    {"peft.lora_alpha", T::Float, "8", "LoRA alpha: the adapters are scaled by lora_alpha / r (PEFT's default, 8)", "0", nullptr, nullptr},
    {"peft.lora_dropout", T::Float, "0.0", "Dropout on the LoRA adapters' input in training", "0", "0.999", nullptr},
    {"peft.target_modules", T::String, "", "Modules that get LoRA adapters: comma-separated module-name suffixes (q_proj,v_proj) or all-linear (every LoRA-capable linear layer but lm_head; attention modules only when named); empty = the policy's default (llama: q_proj,v_proj; act: its encoder and decoder attention, state projections and action head)", nullptr, nullptr, nullptr},
    {"peft.full_training_modules", T::String, "", "Modules trained whole beside the adapters, comma-separated name suffixes (PEFT's modules_to_save, e.g. lm_head)", nullptr, nullptr, nullptr},
    {"peft.adapter_path", T::String, "", "A LoRA adapter to train further (the pretrained_model folder of a LoRA run's checkpoint) on the --policy.path base, as PEFT's is_trainable=True; --policy.path=<that folder> alone sets both, the base from its adapter_config.json's base_model_name_or_path and the --peft.* options not given from its LoRA options", nullptr, nullptr, nullptr},
    {"peft.merge", T::Bool, "false", "At the end of training also write the merged full weights (W + B A lora_alpha / r) as <output_dir>/merged_model/model.safetensors with config.json, which transformers loads", nullptr, nullptr, nullptr},
    {"parallelism.dp_replicate", T::Int, "1", "Data-parallel replicas (untouched degrees on W processes = W replicas, plain DDP)", "1", nullptr, nullptr},
    {"parallelism.dp_shard", T::Int, "1", "Ranks each parameter is sharded over (-1 = fill the world size)", "-1", nullptr, nullptr},
    {"distributed.comm", T::String, "auto", "Transport plugin (comm kind); auto = gloo for cpu, nccl for cuda", nullptr, nullptr, nullptr},
    {"distributed.timeout_s", T::Float, "600", "Seconds any collective or rendezvous may wait before the run fails", "0.1", nullptr, nullptr},
    {"distributed.collective_ledger", T::Bool, "true", "Record every rank's collectives; a stuck or mismatched one is reported naming the ranks (docs/distributed.md)", nullptr, nullptr, nullptr},
    {"distributed.check_collectives", T::Bool, "true", "Compare the ranks' collective sequences at every optimizer step (one small all-reduce); needs the ledger", nullptr, nullptr, nullptr},
};
}  // namespace

const std::vector<OptionSpec>& core_options() { return kCoreOptions; }

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
  schema.add("", kCoreOptions.data(), kCoreOptions.size(), "core");
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
