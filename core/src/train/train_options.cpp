// shardkit-train's own option table and the schema that joins it with the plugins' options.
#include "train_options.hpp"

#include "shardkit/error.hpp"

namespace shardkit::train {

namespace {
using T = OptionType;
const std::vector<OptionSpec> kCoreOptions = {
    {"policy.type", T::String, "mlp", "Policy plugin to train", nullptr, nullptr, nullptr},
    {"policy.device", T::String, "cpu", "Torch device: cpu or cuda (cuda:LOCAL_RANK per process)", nullptr, nullptr, nullptr},
    {"policy.path", T::String, "", "Start from the weights in this pretrained_model folder", nullptr, nullptr, nullptr},
    {"dataset.type", T::String, "synthetic", "Dataset plugin to read", nullptr, nullptr, nullptr},
    {"distributed_backend", T::String, "auto", "Backend plugin; auto = single for one process, ddp for several", nullptr, nullptr, nullptr},
    {"checkpoint_format", T::String, "safetensors", "Checkpoint format plugin", nullptr, nullptr, nullptr},
    {"steps", T::Int, "1000", "Loop steps (micro-batches per process) to train for", "1", nullptr, nullptr},
    {"batch_size", T::Int, "8", "Samples per micro-batch per process", "1", nullptr, nullptr},
    {"seed", T::Int, "1000", "Seed of model initialisation, data order and the synthetic task", "0", nullptr, nullptr},
    {"log_freq", T::Int, "100", "Log every N loop steps", "1", nullptr, nullptr},
    {"save_freq", T::Int, "1000", "Checkpoint every N loop steps (a multiple of the accumulation steps); the last step is always saved", "1", nullptr, nullptr},
    {"save_checkpoint", T::Bool, "true", "Write checkpoints at all", nullptr, nullptr, nullptr},
    {"output_dir", T::String, "", "Run folder; empty = outputs/train/<date>/<time>_<job_name>", nullptr, nullptr, nullptr},
    {"job_name", T::String, "", "Name of the run; empty = the policy type", nullptr, nullptr, nullptr},
    {"resume", T::Bool, "false", "Continue the run whose train_config.json is --config_path (or <output_dir>/checkpoints/last)", nullptr, nullptr, nullptr},
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
    {"accelerator.gradient_accumulation.steps", T::Int, "1", "Micro-batches per optimizer update", "1", nullptr, nullptr},
    {"parallelism.dp_replicate", T::Int, "1", "Data-parallel replicas (untouched degrees on W processes = W replicas, plain DDP)", "1", nullptr, nullptr},
    {"parallelism.dp_shard", T::Int, "1", "Ranks each parameter is sharded over (-1 = fill the world size)", "-1", nullptr, nullptr},
    {"distributed.comm", T::String, "auto", "Transport plugin (comm kind); auto = gloo for cpu, nccl for cuda", nullptr, nullptr, nullptr},
    {"distributed.timeout_s", T::Float, "600", "Seconds any collective or rendezvous may wait before the run fails", "0.1", nullptr, nullptr},
};
}  // namespace

const std::vector<OptionSpec>& core_options() { return kCoreOptions; }

std::string option_prefix(const std::string& kind, const std::string& name) {
  if (kind == "policy") return "policy.";
  if (kind == "dataset") return "dataset.";
  if (kind == "backend") return "accelerator." + name + ".";
  if (kind == "checkpoint_format") return "checkpoint." + name + ".";
  return kind + "." + name + ".";
}

std::string selector_key(const std::string& kind) {
  if (kind == "policy") return "policy.type";
  if (kind == "dataset") return "dataset.type";
  if (kind == "backend") return "distributed_backend";
  if (kind == "checkpoint_format") return "checkpoint_format";
  if (kind == "comm") return "distributed.comm";
  return kind + ".type";
}

Schema build_schema(const Registry& registry, const Selection& selection) {
  Schema schema;
  schema.add("", kCoreOptions.data(), kCoreOptions.size(), "core");
  schema.allow_extra("config_path");
  schema.allow_extra("help");
  const std::pair<std::string, std::string> selected[] = {
      {"policy", selection.policy},
      {"dataset", selection.dataset},
      {"backend", selection.backend},
      {"checkpoint_format", selection.checkpoint_format},
      {"comm", selection.comm}};
  for (const auto& [kind, chosen] : selected) {
    for (const auto& name : registry.names(kind)) {
      const auto* plugin = registry.find(kind, name);
      const auto* d = plugin->descriptor;
      const std::string owner = kind + " '" + name + "'";
      if (name == chosen)
        schema.add(option_prefix(kind, name), d->options, d->num_options, owner);
      else
        schema.add_inactive(option_prefix(kind, name), d->options, d->num_options, owner,
                            selector_key(kind) + "=" + chosen);
    }
  }
  return schema;
}

std::string resolve_backend(const std::string& requested, const MeshShape& mesh) {
  if (requested == "auto") {
    if (mesh.world_size() == 1) return "single";
    return mesh.dp_shard > 1 ? "fsdp" : "ddp";
  }
  if (requested == "ddp" && mesh.dp_shard > 1)
    throw ConfigError("--distributed_backend=ddp replicates the whole model, but the mesh asks for "
                      "--parallelism.dp_shard=" + std::to_string(mesh.dp_shard) +
                      "; use a sharded backend (fsdp, zero) or --parallelism.dp_shard=1");
  return requested;
}

std::string resolve_comm(const std::string& requested, const std::string& device) {
  if (requested != "auto") return requested;
  return device.rfind("cuda", 0) == 0 ? "nccl" : "gloo";
}

}  // namespace shardkit::train
