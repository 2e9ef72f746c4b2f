// The CheckpointManager: the run's side of a checkpoint; the Checkpointer writes and reads the folders.
#include "checkpoint_manager.hpp"
#include "checkpoint_limit.hpp"
#include "elapsed.hpp"

#include <torch/torch.h>

#include <chrono>
#include <filesystem>

#include "base_model_record.hpp"
#include "checkpoint_manifest.hpp"
#include "ema_state_file.hpp"
#include "processor_files.hpp"
#include "rank_agreement.hpp"
#include "token_embeddings.hpp"
#include "shardkit/capability.hpp"
#include "shardkit/error.hpp"
#include "shardkit/error_text.hpp"
#include "shardkit/files.hpp"
#include "shardkit/gather_whole.hpp"
#include "shardkit/ema_entries.hpp"
#include "shardkit/ledger.hpp"
#include "shardkit/logging.hpp"
#include "shardkit/pretrained_config.hpp"
#include "shardkit/pretrained_files.hpp"
#include "shardkit/safetensors.hpp"
#include "shardkit/safetensors_torch.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

CheckpointManager::CheckpointManager(const Registry& registry, const Config& config, const Provenance& provenance,
                                     const Runtime& runtime, DeviceMesh& mesh, CheckpointedParts parts,
                                     CheckpointedRun run, std::string format,
                                     std::shared_ptr<CommGroup> writer_group)
    : config_(config),
      options_(TrainOptions::from(config)),
      provenance_(provenance),
      runtime_(runtime),
      mesh_(mesh),
      parts_(parts),
      run_(std::move(run)),
      checkpointer_(registry, config, runtime, mesh.world(), format),
      writer_group_(std::move(writer_group)) {
  // The background writer's own Checkpointer: its format object and its group are used only on its thread.
  if (writer_group_)
    background_checkpointer_ = std::make_unique<Checkpointer>(registry, config, runtime, *writer_group_, format);
}

void CheckpointManager::collect_model_state(ShardedState& state, bool trainable_only) const {
  parts_.backend.model_state(state);
  if (!parts_.lora) return;
  // A PEFT run's own state is its trainable part (adapters, full-training modules); its
  // starting weights are the rest (the frozen base, which has no adapters).
  for (auto it = state.tensors.begin(); it != state.tensors.end();) {
    if (it->first.rfind("model.", 0) != 0) {
      ++it;
      continue;
    }
    const auto name = it->first.substr(6);
    const bool keep = trainable_only ? parts_.lora_summary.trainable.count(name) > 0
                                     : parts_.lora_summary.adapter_parameters.count(name) == 0;
    it = keep ? std::next(it) : state.tensors.erase(it);
  }
  state.model_is_adapter = trainable_only;
}

void CheckpointManager::verify(const std::string& dir) {
  // Checksums by default, so that a corrupt checkpoint is never trained on; a checkpoint
  // without a manifest (older shardkit, another tool) is then judged by its files, unless
  // --checkpoint.verify=true asks for checksums explicitly.
  const bool checksums = options_.checkpoint_verify.value_or(fs::exists(fs::path(dir) / kManifestFile));
  const auto verify = checksums ? Verify::Checksums : Verify::Sizes;
  std::string problem;
  const auto started = Clock::now();
  if (mesh_.world().rank() == 0) {
    problem = manifest_problem(dir, verify);
    if (!problem.empty())
      problem = "checkpoint " + dir + " cannot be loaded: " + problem + "; nothing was changed. " +
                other_checkpoint_advice(dir);
  }
  problem = from_rank0(mesh_.world(), problem);
  if (!problem.empty()) throw FormatError(problem);
  if (verify == Verify::Checksums)
    logger()->info("checked every file of {} against its manifest's checksums in {:.2f} s "
                   "(--checkpoint.verify=false compares sizes only)",
                   dir, seconds(Clock::now() - started));
}

void CheckpointManager::refuse_links_leaving(const std::string& checkpoint) const {
  // A Hugging Face cache snapshot links into its blobs/ folder; a shardkit checkpoint (it has a
  // manifest) holds no links, and one leading outside it is not read through.
  if (!fs::exists(fs::path(checkpoint) / kManifestFile)) return;
  if (const auto link = link_leaving(checkpoint); !link.empty())
    throw FormatError("checkpoint " + checkpoint + " cannot be loaded: it holds the link " + link +
                      ", which leads outside the checkpoint folder; nothing was read through it");
}

ResumePoint CheckpointManager::resume(const std::string& dir) {
  check_checkpoint_dir(dir);
  TrainingStep record;
  try {
    record = read_training_step((fs::path(dir) / "training_state/training_step.json").string());
  } catch (const FormatError&) {
    verify(dir);  // names a damaged file better than the parse error, when it can
    throw;
  }
  // A hand-made mix-up: the clearer messages first.
  check_step_matches_folder(dir, record.step);
  check_scheduler_matches_step(dir, record.step, /*strict=*/false);
  verify(dir);
  check_scheduler_matches_step(dir, record.step, /*strict=*/true);
  if (record.step >= run_.steps)
    throw ConfigError("the checkpoint in " + dir + " is at step " + std::to_string(record.step) +
                      " and --steps=" + std::to_string(run_.steps) +
                      "; pass a larger --steps to train further");
  const auto format = checkpointer_.format_of(dir);
  if (!format)
    throw FormatError(dir + " holds no model weights in any checkpoint format this shardkit has (" +
                      checkpointer_.formats_known() + "); is it a complete checkpoint?");
  const bool shadow_loaded = load_state(dir, *format, /*with_optimizer=*/true);
  if (auto* ema = parts_.ema) {
    const auto record = (fs::path(dir) / kEmaStateJson).string();
    if (shadow_loaded) {
      ema->set_optimization_step(read_ema_optimization_step(record));
    } else {
      logger()->warn("Resuming with --ema.enable=true but {} is missing; restarting the shadow from the current weights.",
                     record);
      ema->restart();
    }
  }
  load_rng_state(rng_state_path(dir, runtime_.rank, /*for_load=*/true));
  if (auto* scaler = parts_.scaler) {
    const auto path = (fs::path(dir) / "training_state/scaler_state.json").string();
    if (fs::exists(path))
      scaler->load_json(read_text_file(path), path);
    else
      logger()->warn("{} has no scaler_state.json (it was not an fp16 run): the loss scale starts at {}", dir,
                     scaler->scale());
  }

  auto& loader = parts_.loader;
  const auto dp = static_cast<std::int64_t>(mesh_.dp_group().size());
  if (record.batch_size == run_.batch_size && record.dp_world_size == dp) {
    loader.seek(record.data);
  } else {
    // A new global batch: continue after the samples already seen, on a batch boundary.
    const auto global = run_.batch_size * dp;
    const auto batches = record.samples_seen / global;
    DataPosition pos{batches / loader.batches_per_epoch(), batches % loader.batches_per_epoch()};
    logger()->warn("resuming with batch_size {} x {} dp workers, but the checkpoint was written "
                   "with batch_size {} x {} dp workers: continuing at epoch {}, batch {} of the new order",
                   run_.batch_size, dp, record.batch_size, record.dp_world_size, pos.epoch,
                   pos.batch_in_epoch);
    loader.seek(pos);
  }
  logger()->info("resumed from {} at step {}", dir, record.step);
  return {record.step, record.log_window};
}

void CheckpointManager::load_weights(const std::string& pretrained_dir) {
  // A policy that read a Hugging Face folder's weights itself (llama) needs no checkpoint.
  if (const auto* own = capability<PretrainedWeightsLoader>(parts_.policy);
      own != nullptr && own->loaded_pretrained_weights()) {
    logger()->info("loaded weights from {}", pretrained_dir);
    return;
  }
  const auto folder = fs::path(folder_path(pretrained_dir));
  const auto checkpoint = folder.parent_path();
  refuse_links_leaving(checkpoint.string());
  const auto format = checkpointer_.format_of(checkpoint.string());
  if (!format)
    throw ConfigError("--policy.path=" + pretrained_dir + " holds no model weights in any "
                      "checkpoint format this shardkit has (" + checkpointer_.formats_known() + ")");
  load_state(checkpoint.string(), *format, /*with_optimizer=*/false,
             /*ema_weights=*/folder.filename() == kPretrainedEmaFolder);
  logger()->info("loaded weights from {}", pretrained_dir);
}

void CheckpointManager::load_adapter(const std::string& adapter_dir) {
  auto folder = fs::path(adapter_dir).lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();
  const auto checkpoint = folder.parent_path().string();
  refuse_links_leaving(checkpoint);
  const auto format = fs::is_regular_file(folder / "adapter_config.json") ? checkpointer_.format_of(checkpoint) : nullptr;
  if (!format)
    throw ConfigError("--peft.adapter_path=" + adapter_dir + " is not the pretrained_model folder of a LoRA run's "
                      "checkpoint (adapter_config.json in it, the adapter in its checkpoint folder in a format this "
                      "shardkit has: " + checkpointer_.formats_known() + ")");
  // What a checkpoint of this run holds: the adapters and the modules trained whole.
  ShardedState wanted;
  collect_model_state(wanted, /*trainable_only=*/true);
  // pretrained_model_ema/: the "ema." entries, loaded into the same tensors.
  if (folder.filename() == kPretrainedEmaFolder) wanted = renamed_entries(wanted, "model.", "ema.");
  checkpointer_.load(wanted, checkpoint, *format);
  parts_.backend.model_state_loaded();
  logger()->info("LoRA: continuing the adapter of {} ({} trainable tensors) on the base {}", folder.string(),
                 parts_.lora_summary.trainable.size(), options_.policy_path);
}

bool CheckpointManager::load_state(const std::string& dir, CheckpointFormat& format, bool with_optimizer,
                                   bool ema_weights) {
  ShardedState wanted;
  collect_model_state(wanted, /*trainable_only=*/with_optimizer);
  if (ema_weights) wanted = renamed_entries(wanted, "model.", "ema.");  // the same tensors, filled from pretrained_model_ema/
  const bool shadow = with_optimizer && parts_.ema && fs::is_regular_file(fs::path(dir) / kEmaStateJson);
  if (with_optimizer) {
    parts_.optimizer.state(wanted);
    parts_.optimizer.param_groups(wanted, 0.0);
    if (shadow) parts_.ema->add_shadow(wanted);
  }
  checkpointer_.load(wanted, dir, format);
  parts_.backend.model_state_loaded();
  if (with_optimizer)
    for (const auto& difference : parts_.optimizer.param_group_differences(wanted))
      logger()->warn("the checkpoint's optimizer has {}; training continues with the options", difference);
  return shadow;
}

TrainingStep CheckpointManager::training_step_record(std::int64_t step) const {
  TrainingStep r;
  r.step = step;
  r.dp_world_size = mesh_.dp_group().size();
  r.batch_size = run_.batch_size;
  r.grad_accum_steps = run_.accum;
  r.precision = options_.accelerator_mixed_precision;
  r.dp_replicate = mesh_.shape().dp_replicate;
  r.dp_shard = mesh_.shape().dp_shard;
  r.data = parts_.loader.position();
  r.samples_seen = step * run_.batch_size * r.dp_world_size;
  return r;
}

std::string CheckpointManager::pretrained_config_json() const {
  if (const auto* writer = capability<PretrainedConfigWriter>(parts_.policy))
    return writer->pretrained_config_json();
  return config_.section("policy.").to_json();
}

void CheckpointManager::save(std::int64_t step, const LogWindow& window) {
  const auto started = Clock::now();
  if (background_checkpointer_) settle_background_save();  // one save in flight
  const auto waited = seconds_since(started);
  CollectiveScope scope("checkpoint save");
  ShardedState state;
  collect_model_state(state, /*trainable_only=*/true);
  parts_.optimizer.state(state);
  const auto lr = parts_.scheduler.lr(step - 1);
  parts_.optimizer.param_groups(state, lr);
  auto record = training_step_record(step);
  record.log_window = window.averaged_over(mesh_.world());
  std::map<std::string, std::string> files{
      {"pretrained_model/config.json", pretrained_config_json()},
      {"pretrained_model/train_config.json", config_.to_json()},
      {kProvenanceFile, provenance_.json(config_)},
      {"training_state/training_step.json", training_step_json(record)},
      {"training_state/scheduler_state.json", parts_.scheduler.state_json(step)},
      {"training_state/optimizer_param_groups.json", parts_.optimizer.param_groups_json(lr)}};
  if (parts_.scaler) files["training_state/scaler_state.json"] = parts_.scaler->state_json();
  if (parts_.lora)
    files["pretrained_model/adapter_config.json"] = adapter_config_json(*parts_.lora, options_.policy_path);
  if (!run_.base_record.empty()) files[kBaseModelFile] = run_.base_record;  // rank 0's; rank 0 writes the files
  for (auto& [name, content] : pretrained_model_files(parts_.policy, parts_.dataset))
    files["pretrained_model/" + name] = std::move(content);
  if (!parts_.normalizer.stats().empty()) files.merge(processor_files(parts_.normalizer, runtime_.device));
  if (parts_.ema) add_ema(state, files);
  const auto root = (fs::path(run_.output_dir) / "checkpoints").string();
  const auto name = step_dir_name(step, run_.steps);
  if (!background_checkpointer_) {
    const auto dir = checkpointer_.save(root, name, state, files, current_rng_state());
    published(dir, fmt::format("in {:.2f} s", seconds_since(started)));
    return;
  }
  start_background_save(root, name, state, std::move(files), started, waited);
}

void CheckpointManager::published(const std::string& dir, const std::string& how) const {
  if (!runtime_.is_main()) return;
  logger()->info("checkpoint saved: {} ({})", dir, how);
  if (options_.save_total_limit <= 0) return;
  // The newest --save_total_limit stay, once this one is published.
  try {
    for (const auto& name : remove_old_checkpoints(fs::path(dir).parent_path().string(), options_.save_total_limit))
      logger()->info("checkpoint {} removed (--save_total_limit={})", name, options_.save_total_limit);
  } catch (const std::exception& e) {
    // The new checkpoint is complete and published: a removal that failed costs disk space only.
    logger()->warn("--save_total_limit={}: older checkpoints were not all removed: {}", options_.save_total_limit,
                   one_line_message(e));
  }
}

void CheckpointManager::add_ema(ShardedState& state, std::map<std::string, std::string>& files) const {
  const auto& ema = *parts_.ema;
  ema.add_model(state);  // the format writes them into pretrained_model_ema/ as it writes the model
  const std::string model_folder = "pretrained_model/";
  std::map<std::string, std::string> beside;
  for (const auto& [path, content] : files)
    if (path.rfind(model_folder, 0) == 0)
      beside[std::string(kPretrainedEmaFolder) + "/" + path.substr(model_folder.size())] = content;
  files.merge(beside);
  files[kEmaStateJson] = ema_state_json(ema.options(), ema.optimization_step());
  ShardedState shadow;
  ema.add_shadow(shadow);
  // shadow_params in the policy's parameters() order (a tied parameter once, under its first
  // name); checked on every rank alike, before the collective.
  std::vector<std::string> order;
  for (const auto& item : parts_.policy.named_parameters())
    if (shadow.tensors.count("ema." + item.key())) order.push_back("ema." + item.key());
  if (order.size() != shadow.tensors.size())
    throw RuntimeError("ema_state.pt: " + std::to_string(shadow.tensors.size() - order.size()) +
                       " shadowed tensors are not among the policy's parameters");
  const auto whole = gather_whole_entries(shadow, "ema.", mesh_.world());
  if (mesh_.world().rank() != 0) return;  // rank 0 writes the files
  std::vector<at::Tensor> ordered;
  for (const auto& key : order) ordered.push_back(whole.at(key));
  files[kEmaStatePt] = ema_state_pt(ema.options(), ema.optimization_step(), ordered);
}

void CheckpointManager::save_merged_model() {
  CollectiveScope scope("merged model save");
  const auto& lora = *parts_.lora;
  ShardedState state;
  parts_.backend.model_state(state);
  auto gathered = gather_whole_entries(state, "model.", mesh_.world());
  if (mesh_.world().rank() != 0) return;
  std::map<std::string, at::Tensor> tensors;
  for (auto& [key, tensor] : gathered) tensors[key.substr(6)] = tensor;
  merge_lora_weights(tensors, lora.lora_alpha / static_cast<double>(lora.r));
  const auto dir = fs::path(run_.output_dir) / "merged_model";
  const auto tmp = fs::path(run_.output_dir) / ".tmp-merged_model";
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
  for (const auto& [name, content] : pretrained_model_files(parts_.policy, parts_.dataset))
    write_text_file((tmp / name).string(), content);
  fs::remove_all(dir, ec);
  fs::rename(tmp, dir, ec);
  if (ec) throw FormatError("cannot move " + tmp.string() + " to " + dir.string() + ": " + ec.message());
  logger()->info("merged weights (adapters folded in, lora_alpha / r = {:g}) written to {}",
                 lora.lora_alpha / static_cast<double>(lora.r), (dir / "model.safetensors").string());
}

}  // namespace shardkit::train
