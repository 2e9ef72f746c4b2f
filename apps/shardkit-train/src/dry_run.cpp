// The dry run: a backend set up on a planning mesh, its memory plan printed.
#include "dry_run.hpp"

#include <fstream>
#include <optional>
#include <set>
#include <utility>

#include <unistd.h>

#include <spdlog/logger.h>

#include "shardkit/backend.hpp"
#include "shardkit/capability.hpp"
#include "shardkit/dataset.hpp"
#include "shardkit/logging.hpp"
#include "shardkit/sharding_report.hpp"
#include "activation_checkpoints.hpp"
#include "activation_memory.hpp"
#include "token_embeddings.hpp"

namespace shardkit::train {
namespace {

// Every rank of a whole-parameter backend holds the model, its gradients and AdamW's moments.
MemoryPlan whole_model_plan(const Policy& policy) {
  MemoryPlan plan;
  std::set<const void*> seen;
  for (const auto& p : policy.parameters()) {
    if (!seen.insert(p.unsafeGetTensorImpl()).second) continue;
    const auto bytes = p.numel() * p.element_size();
    plan.parameters += bytes;
    if (p.requires_grad()) {
      plan.gradients += bytes;
      plan.optimizer += 2 * bytes;
    }
  }
  return plan;
}

/// The memory a run could have here: /proc/meminfo's MemAvailable plus what this dry run holds
/// itself (its resident pages, the whole model among them), in bytes; 0 where it cannot be read.
std::int64_t available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  std::int64_t kib = 0, available = 0;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") available = kib * 1024;
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  if (available > 0 && statm >> size >> resident) available += resident * sysconf(_SC_PAGESIZE);
  return available;
}

/// Whether `processes` ranks of `per_rank` tensor bytes each fit this machine's available memory.
void log_fit(spdlog::logger& log, std::int64_t per_rank, int processes) {
  const auto available = available_memory();
  if (available <= 0) return;
  const auto all = per_rank * processes;
  if (all <= available)
    log.info("dry run: {} process(es) of this plan on this machine need about {} of tensor memory, within the {} "
             "it has for them",
             processes, format_bytes(all), format_bytes(available));
  else
    log.warn("dry run: {} process(es) of this plan on this machine need about {} of tensor memory, more than the {} "
             "it has for them: this run does not fit here; shard over more ranks (fsdp or zero 3), turn on "
             "--accelerator.activation_checkpointing.mode=full, lower --batch_size, or spread the processes over "
             "more machines",
             processes, format_bytes(all), format_bytes(available));
}

}  // namespace

int print_memory_plan(const Config& config, const Registry& registry, const Runtime& runtime,
                      const Selection& selection, const MeshShape& shape) {
  const auto options = TrainOptions::from(config);
  auto dataset = registry.create_as<Dataset>("dataset", selection.dataset,
                                             plugin_context(config, runtime, "dataset", selection.dataset));
  auto policy_context = plugin_context(config, runtime, "policy", selection.policy);
  policy_context.features = dataset->features();
  auto policy = registry.create_as<Policy>("policy", selection.policy, policy_context);
  match_token_embeddings(*dataset, *policy, selection.policy, nullptr);
  policy->to(torch::Device(runtime.device));
  const auto whole = whole_model_plan(*policy);
  // Activations, measured on one micro-batch of the whole model before the backend shards it:
  // a rank's activations are those of its own micro-batch, whatever the sharding.
  const auto checkpointing = checkpointing_choice(config, selection.backend, *policy, selection.policy);
  std::optional<ActivationMemory> activations;
  if (runtime.device == "cpu")
    activations = measure_activation_memory(*policy, *dataset, options.batch_size,
                                            checkpointing.classes, checkpointing.every, checkpointing.mode);

  auto mesh = DeviceMesh::planning(shape);
  auto backend_context = plugin_context(config, runtime, "backend", selection.backend);
  backend_context.mesh = &mesh;
  auto backend = registry.create_as<Backend>("backend", selection.backend, backend_context);
  backend->setup(*policy);
  const auto* sharded = capability<ShardingReport>(std::as_const(*backend));
  const auto plan = sharded != nullptr ? sharded->plan() : whole;
  // --ema.enable: a shadow of what the optimizer steps on this rank (its shards when sharded).
  std::int64_t shadow = 0;
  if (options.ema_enable)
    for (const auto& p : backend->parameters()) shadow += p.param.numel() * p.param.element_size();
  // --checkpoint.async_mode=async: the host copy of what this rank's saves write (its weights,
  // AdamW state and shadow), held from the first save on.
  const bool async_saves = options.save_checkpoint && options.checkpoint_async_mode != "disabled";
  const std::int64_t staging = async_saves ? plan.parameters + plan.optimizer + shadow : 0;
  const auto total = plan.parameters + plan.gradients + plan.optimizer + plan.gathered_peak + shadow + staging;
  const auto whole_total = whole.parameters + whole.gradients + whole.optimizer;
  auto log = logger();
  log->info("dry run: backend {} on {} ({} processes), policy {}", selection.backend, mesh.describe(),
            shape.world_size(), selection.policy);
  log->info("dry run: per rank (rank 0, the largest share): {}", plan.describe());
  if (shadow > 0)
    log->info("dry run: --ema.enable adds the EMA shadow of the weights the optimizer steps: {} per rank "
              "({} bytes; the whole trainable weights: {} bytes)",
              format_bytes(shadow), shadow, whole.gradients);
  if (staging > 0)
    log->info("dry run: --checkpoint.async_mode={} adds the host copy of what a save writes: {} per rank ({} bytes)",
              options.checkpoint_async_mode, format_bytes(staging), staging);
  log->info("dry run: per rank in all {} ({} bytes) = {:.2f} x a whole replica's parameters, gradients and "
            "AdamW state ({}); activations come on top",
            format_bytes(total), total, whole_total > 0 ? static_cast<double>(total) / whole_total : 0.0,
            format_bytes(whole_total));
  if (!activations) {
    log->info("dry run: activations are measured on CPU runs only (this run's device: {})", runtime.device);
    log_fit(*log, total, shape.world_size());
    return 0;
  }
  const auto& a = *activations;
  log->info("dry run: activations per rank, measured on one fp32 micro-batch of {} samples: {} ({} bytes) without "
            "activation checkpointing, {} selective (every {}), {} full",
            a.batch, format_bytes(a.none), a.none, format_bytes(a.selective), checkpointing.every,
            format_bytes(a.full));
  const auto expected = total + a.of(checkpointing.mode);
  log->info("dry run: expected peak tensor memory per rank with this run's activation checkpointing ({}): {} ({} "
            "bytes)",
            nn::checkpointing_mode_name(checkpointing.mode), format_bytes(expected), expected);
  log_fit(*log, expected, shape.world_size());
  return 0;
}

}  // namespace shardkit::train
