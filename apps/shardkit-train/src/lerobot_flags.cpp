// LeRobot command lines copied over: habit flags that turn off what shardkit lacks, and their errors.
#include "lerobot_flags.hpp"

#include <cstring>

namespace shardkit::train {

namespace {

/// Whether plugin (kind, name) declares option `option`.
bool declares(const Registry& registry, const std::string& kind, const std::string& name, const char* option) {
  const auto* plugin = registry.find(kind, name);
  if (!plugin) return false;
  const auto* d = plugin->descriptor;
  for (std::uint32_t i = 0; i < d->num_options; ++i)
    if (d->options[i].name && std::strcmp(d->options[i].name, option) == 0) return true;
  return false;
}

/// Whether the user gave `key` for this run (a flag or a config file; not a default, not a
/// value saved in the checkpoint being resumed).
bool given_now(const Provenance& provenance, const std::string& key) {
  const auto* source = provenance.find(key);
  if (!source) return false;
  const auto kind = Provenance::kind_of(source->origin);
  return kind == "command line" || kind == "config file";
}

/// --eval_freq / --eval_steps need a validation split (LeRobot main: held-out episodes);
/// --max_eval_samples and --env_eval_freq are noted when they change nothing.
void check_evaluation_flags(const Config& config, const Provenance& provenance, std::vector<std::string>& errors,
                            std::vector<std::string>& notices) {
  const auto number = [&](const char* key) { return config.has(key) ? config.get_int(key) : 0; };
  const auto eval_freq = number("eval_freq"), eval_steps = number("eval_steps");
  const bool by_epoch = config.has("eval_strategy") && config.get_string("eval_strategy") == "epoch";
  const auto flag = by_epoch        ? std::string("--eval_strategy=epoch")
                    : eval_steps > 0 ? "--eval_steps=" + std::to_string(eval_steps)
                                     : "--eval_freq=" + std::to_string(eval_freq);
  if (by_epoch && (eval_freq > 0 || eval_steps > 0)) {
    errors.push_back("--eval_strategy=epoch and --" + std::string(eval_steps > 0 ? "eval_steps" : "eval_freq") +
                     " both say when to evaluate; give one (or --eval_strategy=steps with the step count)");
  } else if (eval_freq > 0 && eval_steps > 0) {
    errors.push_back("--eval_freq=" + std::to_string(eval_freq) + " and --eval_steps=" + std::to_string(eval_steps) +
                     " both ask for offline evaluation; give one (--eval_steps: every N steps, LeRobot main's "
                     "name; --eval_freq: every N steps and at the last)");
  } else if (eval_freq > 0 || eval_steps > 0 || by_epoch) {
    if (!config.has("dataset.split"))
      errors.push_back(flag + " evaluates on a validation split, and --dataset.type=" +
                       config.get_string("dataset.type") + " has none (no --dataset.split option); use a dataset "
                       "with one (lerobot: --dataset.eval_split; text: --dataset.validation_fraction or "
                       "--dataset.validation_path; synthetic: --dataset.validation_samples), or leave it at 0 "
                       "(the default: no evaluation)");
    else if (config.has("dataset.eval_split") && !(config.get_float("dataset.eval_split") > 0))
      errors.push_back((eval_steps > 0 ? std::string("eval_steps > 0 requires dataset.eval_split > 0.0 to hold out "
                                                     "eval data")
                                       : flag + " needs held-out episodes") +
                       ": add --dataset.eval_split=0.1 (the fraction of each task's episodes held out)");
  } else {
    for (const auto* key : {"eval_freq", "eval_steps"})
      if (given_now(provenance, key))
        notices.push_back("--" + std::string(key) + "=0: no evaluation while training, which is the default");
    if (given_now(provenance, "max_eval_samples") && number("max_eval_samples") > 0)
      notices.push_back("--max_eval_samples=" + std::to_string(number("max_eval_samples")) +
                        " is ignored: nothing is evaluated (--eval_steps=N turns offline evaluation on)");
  }
  if (given_now(provenance, "env_eval_freq") && number("env_eval_freq") > 0)
    notices.push_back("--env_eval_freq=" + std::to_string(number("env_eval_freq")) +
                      " is ignored: shardkit runs no simulation environment (as lerobot-train without --env.type); "
                      "--eval_steps=N logs the loss on held-out episodes");
}

}  // namespace

void check_dataset_repo_id(RawConfig& flags, RawConfig& file, const Registry& registry,
                           const std::string& dataset, std::vector<std::string>& errors) {
  const char* const key = "dataset.repo_id";
  if (declares(registry, "dataset", dataset, "repo_id")) return;
  const auto* layer = flags.count(key) ? &flags : file.count(key) ? &file : nullptr;
  if (!layer) return;
  std::string installed;
  for (const auto& name : registry.names("dataset")) installed += (installed.empty() ? "" : ", ") + name;
  const bool lerobot = declares(registry, "dataset", "lerobot", "repo_id");
  errors.push_back("--" + std::string(key) + "=" + to_string(layer->at(key).value) +
                   " names a LeRobot dataset, but --dataset.type=" + dataset + " is selected, which has no repo_id; " +
                   (lerobot ? std::string("add --dataset.type=lerobot to read it")
                            : std::string("the 'lerobot' dataset plugin reads them and is not installed "
                                          "(it is built when Arrow and FFmpeg are found: docs/building.md)")) +
                   ". Dataset plugins installed: " + (installed.empty() ? "none" : installed) +
                   "; bring your own with --plugins=libshardkit-dataset-<name>.so (docs/plugins.md)");
  flags.erase(key);
  file.erase(key);
}

void apply_lerobot_flags(Config& config, Provenance& provenance, std::vector<std::string>& errors,
                         std::vector<std::string>& notices) {
  const auto on = [&](const char* key) { return config.has(key) && config.get_bool(key); };
  if (on("wandb.enable"))
    errors.push_back("--wandb.enable=true: shardkit has no Weights & Biases logger; track the run with trackio "
                     "(--trackio.enable=true, LeRobot's other tracker) or TensorBoard with "
                     "--logger.type=tensorboard (event files in <output_dir>/tensorboard; metrics.jsonl is always "
                     "written), and drop --wandb.enable");
  else if (given_now(provenance, "wandb.enable"))
    notices.push_back("--wandb.enable=false is ignored: shardkit has no Weights & Biases logger (metrics go to "
                      "<output_dir>/metrics.jsonl; --logger.type=tensorboard adds TensorBoard files)");
  for (const auto* key : {"wandb.project", "wandb.entity", "wandb.notes", "wandb.mode"})
    if (given_now(provenance, key))
      notices.push_back("--" + std::string(key) + "=" + config.get_string(key) +
                        " is ignored: shardkit sends nothing to Weights & Biases (metrics go to "
                        "<output_dir>/metrics.jsonl; --logger.type=tensorboard adds TensorBoard files)");
  if (given_now(provenance, "policy.repo_id"))
    notices.push_back("--policy.repo_id=" + config.get_string("policy.repo_id") +
                      " is ignored: shardkit pushes nothing to the Hugging Face Hub; upload "
                      "<output_dir>/checkpoints/last/pretrained_model there yourself (huggingface-cli upload)");
  if (on("policy.push_to_hub"))
    errors.push_back("--policy.push_to_hub=true: shardkit does not upload to the Hugging Face Hub; drop the flag "
                     "and upload <output_dir>/checkpoints/last/pretrained_model yourself (huggingface-cli upload)");
  else if (given_now(provenance, "policy.push_to_hub"))
    notices.push_back("--policy.push_to_hub=false is ignored: shardkit never uploads; checkpoints stay in "
                      "<output_dir>/checkpoints");
  check_evaluation_flags(config, provenance, errors, notices);
  // LeRobot's --trackio.project names the project of the trackio logger (--trackio.enable selects it).
  if (given_now(provenance, "trackio.project")) {
    const std::string flag = "--trackio.project=" + config.get_string("trackio.project");
    if (!config.has("logger.trackio.project"))
      notices.push_back(flag + " is ignored: trackio is not recording this run (--trackio.enable=true turns it on)");
    else if (!given_now(provenance, "logger.trackio.project")) {
      config.set("logger.trackio.project", Value(config.get_string("trackio.project")));
      provenance.set("logger.trackio.project", provenance.find("trackio.project")->origin,
                     "from " + flag + " (LeRobot's name)");
    }
  }
  if (given_now(provenance, "num_workers")) {
    const auto workers = config.get_int("num_workers");
    const std::string flag = "--num_workers=" + std::to_string(workers);
    if (!config.has("dataset.num_workers")) {
      notices.push_back(flag + " is ignored: --dataset.type=" + config.get_string("dataset.type") +
                        " has no workers option (batches are read on the loader's own thread)");
    } else if (given_now(provenance, "dataset.num_workers")) {
      if (config.get_int("dataset.num_workers") != workers)
        notices.push_back(flag + " is ignored: --dataset.num_workers=" +
                          std::to_string(config.get_int("dataset.num_workers")) + " is given too and wins");
    } else {
      config.set("dataset.num_workers", Value(workers));
      provenance.set("dataset.num_workers", provenance.find("num_workers")->origin, "from " + flag + " (LeRobot's name)");
      notices.push_back(flag + " sets --dataset.num_workers=" + std::to_string(workers) +
                        " (threads decoding each batch)");
    }
  }
}

void apply_peft_flags(Config& config, Provenance& provenance, std::vector<std::string>& errors) {
  if (!config.has("peft.method_type")) return;
  auto method = config.get_string("peft.method_type");
  if (method.empty()) {
    // As lerobot-train: any --peft.* field given turns PEFT on (LoRA, the only method here).
    std::string given;
    for (const auto& item : config.values())
      if (item.first.rfind("peft.", 0) == 0 && given_now(provenance, item.first)) given = item.first;
    if (given.empty()) return;
    method = "LORA";
    config.set("peft.method_type", Value(method));
    provenance.set("peft.method_type", provenance.find(given)->origin, "LORA: --" + given + " turns PEFT on");
  }
  if (method != "LORA") {
    errors.push_back("--peft.method_type=" + method + ": shardkit implements only LoRA; use --peft.method_type=LORA "
                     "(or leave it out: any --peft.* option means LORA)");
    return;
  }
  if (config.get_string("policy.path").empty())
    errors.push_back("--peft.method_type=LORA without --policy.path: training from scratch using PEFT is unlikely "
                     "to yield good results; supply --policy.path=<a pretrained model folder> to fine-tune it");
}

}  // namespace shardkit::train
