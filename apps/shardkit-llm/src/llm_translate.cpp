// LLMTrainingParams translated into shardkit-train's options (docs/aitraining.md lists each).
#include "llm_translate.hpp"

#include <algorithm>
#include <cctype>
#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "llm_fields.hpp"
#include "shardkit/error.hpp"
#include "shardkit/files.hpp"

namespace shardkit::llm {
namespace fs = std::filesystem;
namespace {

/// The training file of `split` in the `data_path` folder: {split}.csv, else {split}.jsonl
/// (AITraining's order); "" when neither exists.
std::string split_file(const std::string& data_path, const std::string& split) {
  std::error_code ec;
  for (const char* ext : {".csv", ".jsonl"})
    if (const auto p = fs::path(data_path) / (split + ext); fs::is_regular_file(p, ec)) return p.string();
  return "";
}

}  // namespace

boost::json::object model_config(const std::string& folder) {
  const auto path = fs::path(folder) / "config.json";
  std::error_code missing;
  if (!fs::is_regular_file(path, missing)) return {};
  boost::system::error_code ec;
  auto config = boost::json::parse(read_text_file(path.string()), ec);
  return !ec && config.is_object() ? std::move(config.as_object()) : boost::json::object();
}

std::string project_folder(const std::string& project_name) {
  if (project_name.empty() || fs::path(project_name).is_absolute()) return project_name;
  std::string base;
  if (const char* dir = std::getenv("AUTOTRAIN_PROJECTS_DIR")) base = dir;  // set, even empty: as AITraining
  else if (const char* home = std::getenv("HOME"); home && *home) base = (fs::path(home) / "trainings").string();
  else base = "trainings";
  return (fs::path(base) / project_name).lexically_normal().string();
}

namespace {

/// AITraining's effective model_max_length: the value given, else (at its default, 2048) the
/// model's max_position_embeddings from config.json when it has one.
std::int64_t model_max_length(const Params& p) {
  if (p.given("model_max_length") || p.integer("model_max_length") != 2048) return p.integer("model_max_length");
  const auto config = model_config(p.text("model"));
  if (const auto* v = config.if_contains("max_position_embeddings"); v && v->is_int64()) return v->as_int64();
  return 2048;
}

/// The examples of a .jsonl (non-blank lines) or .csv (records after the header; quoted fields
/// may hold newlines) file, as AITraining's len(train_data); 0 when it cannot be read.
std::int64_t count_examples(const std::string& file) {
  std::ifstream in(file);
  if (!in) return 0;
  std::int64_t count = 0;
  if (fs::path(file).extension() == ".jsonl") {
    for (std::string line; std::getline(in, line);)
      count += line.find_first_not_of(" \t\r") != std::string::npos;
    return count;
  }
  bool quoted = false, blank = true;
  for (char c; in.get(c);) {
    if (c == '"') quoted = !quoted;
    if (c == '\n' && !quoted) {
      count += !blank;
      blank = true;
    } else if (c != '\r') {
      blank = false;
    }
  }
  count += !blank;
  return std::max<std::int64_t>(0, count - 1);  // the header
}

std::string with_origin(const Params& p, const std::string& name) {
  return p.at(name).origin + (p.at(name).origin == Params::kDefault ? " for " + name : "");
}

}  // namespace

Translation translate(const Params& p, int processes, bool cuda) {
  Translation t;
  std::vector<std::string> problems;
  auto& a = t.train_args;
  const auto refuse = [&](const std::string& name, const std::string& answer) {
    problems.push_back(with_origin(p, name) + "=" + p.text(name) + ": " + answer);
  };

  // What AITraining trains, and on what.
  const auto trainer = p.text("trainer") == "generic" ? std::string("default") : p.text("trainer");
  if (trainer != "default" && trainer != "sft")
    refuse("trainer", "shardkit-llm has AITraining's default and sft trainers (causal-LM training on text and on "
                      "conversations); " + trainer + " is not one of them");
  const auto model = p.text("model");
  std::error_code ec;
  if (!fs::is_directory(model, ec))
    problems.push_back(with_origin(p, "model") + "=" + model + ": not a model folder here; shardkit reads local "
                       "Hugging Face folders (config.json, model.safetensors, tokenizer.json): download it first "
                       "(hf download " + model + " --local-dir <folder>) and give the folder");
  a.push_back("--policy.path=" + model);
  a.push_back("--dataset.type=text");
  const auto data_path = p.text("data_path");
  const auto train_file = split_file(data_path, p.text("train_split"));
  if (train_file.empty())
    problems.push_back(with_origin(p, "data_path") + "=" + data_path + ": no " + p.text("train_split") + ".csv or " +
                       p.text("train_split") + ".jsonl in it (AITraining reads {train_split}.csv, else .jsonl, from "
                       "the data folder; Hub datasets are not read: download the files first)");
  a.push_back("--dataset.path=" + (train_file.empty() ? data_path : train_file));
  if (p.text("text_column") != "text") a.push_back("--dataset.text_column=" + p.text("text_column"));
  if (!p.is_none("chat_template")) {
    const auto chat = p.text("chat_template");
    static const std::set<std::string> kTemplates = {"tokenizer", "chatml", "zephyr", "none"};
    if (!kTemplates.count(chat)) refuse("chat_template", "AITraining's values are tokenizer, chatml, zephyr and none");
    a.push_back("--dataset.chat_template=" + chat);
  }
  a.push_back(std::string("--dataset.response_only_loss=") + (p.flag("response_only_loss") ? "true" : "false"));
  if (!p.flag("add_eos_token"))
    refuse("add_eos_token", "shardkit always ends a plain-text document with the EOS token (AITraining's default); "
                            "leave add_eos_token at true");
  // block_size: the sequence length (-1: model_max_length, as AITraining).
  const auto block = p.text("block_size");
  if (block.find(',') != std::string::npos)
    refuse("block_size", "one block size per run in shardkit (AITraining's list is for its sweeps); give one");
  else
  {
    // AITraining's configure_block_size: -1 is min(the tokenizer's max length, 1024); a larger
    // value is cut to that max length (model_max_length, at its default the model's own).
    const auto longest = model_max_length(p);
    auto size = std::stoll(block);
    if (size == -1) size = std::min<std::int64_t>(longest, 1024);
    if (size > longest) {
      t.warnings.push_back(with_origin(p, "block_size") + "=" + block + " is longer than the model's " +
                           std::to_string(longest) + " positions: block_size " + std::to_string(longest) +
                           " (as AITraining)");
      size = longest;
    }
    a.push_back("--dataset.max_seq_len=" + std::to_string(size));
  }
  if (p.text("padding") != "right")
    refuse("padding", "shardkit pads on the right (AITraining's default); padding only changes where the pad tokens "
                      "sit, not what is trained");
  if (!p.is_none("packing")) a.push_back(std::string("--dataset.packing=") + (p.flag("packing") ? "true" : "false"));
  if (!p.is_none("max_samples"))
    refuse("max_samples", "shardkit-llm trains on the whole file; cut the file to the samples you want");

  // The optimizer and schedule: transformers' Trainer as AITraining sets it up.
  a.push_back("--optimizer.lr=" + p.text("lr"));
  a.push_back("--epochs=" + p.text("epochs"));
  a.push_back("--batch_size=" + p.text("batch_size"));
  a.push_back("--accelerator.gradient_accumulation.steps=" + p.text("gradient_accumulation"));
  static const std::set<std::string> kAdamW = {"adamw_torch", "adamw_torch_fused", "adamw_hf", "adamw"};
  if (!kAdamW.count(p.text("optimizer")))
    refuse("optimizer", "shardkit's optimizer is AdamW (adamw_torch, AITraining's default)");
  a.push_back("--optimizer.weight_decay=" + p.text("weight_decay"));
  a.push_back("--optimizer.grad_clip_norm=" + p.text("max_grad_norm"));
  const auto scheduler = p.text("scheduler");
  if (scheduler == "linear" || scheduler == "constant") {
    a.push_back("--scheduler.type=" + scheduler);
    // transformers' constant schedule has no warmup (constant_with_warmup has).
    if (scheduler == "linear" && p.number("warmup_ratio") > 0)
      a.push_back("--scheduler.warmup_ratio=" + p.text("warmup_ratio"));
  } else {
    refuse("scheduler", "shardkit-llm has transformers' linear (AITraining's default) and constant schedules");
  }
  a.push_back("--seed=" + p.text("seed"));
  // transformers' gradient checkpointing of every decoder layer, on unless disabled (AITraining's default).
  a.push_back(std::string("--accelerator.activation_checkpointing.mode=") +
              (p.flag("disable_gradient_checkpointing") ? "none" : "full"));
  if (!p.is_none("mixed_precision")) {
    const auto mp = p.text("mixed_precision");
    if (mp == "fp16" || mp == "bf16") a.push_back("--accelerator.mixed_precision=" + mp);
    else if (mp == "none" || mp == "no") a.push_back("--accelerator.mixed_precision=no");
    else refuse("mixed_precision", "AITraining's values are fp16, bf16 and none");
  }

  // LoRA (PEFT), with AITraining's defaults.
  if (p.flag("peft")) {
    a.push_back("--peft.method_type=LORA");
    a.push_back("--peft.r=" + p.text("lora_r"));
    a.push_back("--peft.lora_alpha=" + p.text("lora_alpha"));
    a.push_back("--peft.lora_dropout=" + p.text("lora_dropout"));
    a.push_back("--peft.target_modules=" + p.text("target_modules"));
    a.push_back(std::string("--peft.merge=") + (p.flag("merge_adapter") ? "true" : "false"));
  }
  if (!p.is_none("quantization")) {
    if (cuda)
      refuse("quantization", "shardkit trains in fp32/bf16/fp16 only; leave quantization out");
    else
      t.warnings.push_back(with_origin(p, "quantization") + "=" + p.text("quantization") +
                           ": without CUDA AITraining skips quantization, and so does shardkit-llm");
  }

  // Logging and checkpoints.
  const auto log = p.text("log");
  if (log == "wandb") {
    t.warnings.push_back(with_origin(p, "log") + "=wandb: shardkit does not talk to Weights & Biases; TensorBoard "
                         "files are written instead (" + project_folder(p.text("project_name")) +
                         "/tensorboard; --log tensorboard says so without this warning, --log none writes none)");
    a.push_back("--logger.type=jsonl,tensorboard");
  } else if (log == "tensorboard") {
    a.push_back("--logger.type=jsonl,tensorboard");
  } else if (log == "trackio") {
    a.push_back("--trackio.enable=true");
  } else if (log != "none") {
    refuse("log", "AITraining's values are wandb, tensorboard, trackio and none");
  }
  // Steps: transformers counts optimizer updates, shardkit-train loop steps (x accumulation).
  const auto accum = std::max<std::int64_t>(1, p.integer("gradient_accumulation"));
  const auto valid_file = p.is_none("valid_split") ? std::string() : split_file(data_path, p.text("valid_split"));
  // logging_steps -1: AITraining's rule, 20% of the (validation, else training) examples per
  // batch, between 1 and 25.
  auto logging_steps = p.integer("logging_steps");
  if (logging_steps == -1) {
    const auto counted = count_examples(valid_file.empty() ? train_file : valid_file);
    logging_steps = std::clamp<std::int64_t>(
        static_cast<std::int64_t>(0.2 * static_cast<double>(counted) /
                                  static_cast<double>(std::max<std::int64_t>(1, p.integer("batch_size")))),
        1,
        25);
  }
  if (logging_steps > 0) a.push_back("--log_freq=" + std::to_string(logging_steps * accum));
  const auto save = p.text("save_strategy");
  if (save == "steps") {
    a.push_back("--save_freq=" + std::to_string(p.integer("save_steps") * accum));
  } else if (save == "epoch") {
    a.push_back("--save_strategy=epoch");
  } else if (save == "no") {
    a.push_back("--save_freq=0");  // the final model only: shardkit saves the last step
  } else {
    refuse("save_strategy", "AITraining's values are epoch, steps and no");
  }
  if (const auto keep = p.integer("save_total_limit"); keep > 0) a.push_back("--save_total_limit=" + std::to_string(keep));
  const auto eval = p.text("eval_strategy");
  if (eval != "epoch" && eval != "steps" && eval != "no")
    refuse("eval_strategy", "AITraining's values are epoch, steps and no");
  // valid_split: the {valid_split} file, evaluated as eval_strategy says (every logging_steps
  // updates for steps, transformers' default eval_steps).
  if (!p.is_none("valid_split")) {
    if (valid_file.empty())
      problems.push_back(with_origin(p, "valid_split") + "=" + p.text("valid_split") + ": no " + p.text("valid_split") +
                         ".csv or " + p.text("valid_split") + ".jsonl in " + data_path);
    else if (eval != "no")
      a.push_back("--dataset.validation_path=" + valid_file);
    if (eval == "epoch") a.push_back("--eval_strategy=epoch");
    else if (eval == "steps") a.push_back("--eval_steps=" + std::to_string(logging_steps * accum));
  }
  // resume_from_checkpoint: auto/latest (the project's last checkpoint, a fresh start without
  // one) or a checkpoint folder.
  std::string resume_from;
  if (!p.is_none("resume_from_checkpoint")) {
    auto r = p.text("resume_from_checkpoint");
    auto lower = r;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    const auto project = project_folder(p.text("project_name"));
    if (lower == "auto" || lower == "latest" || lower == "true") {
      if (fs::exists(fs::path(project) / "checkpoints" / "last", ec))
        a.push_back("--resume=true");
      else
        t.warnings.push_back(with_origin(p, "resume_from_checkpoint") + "=" + r + ": " + project +
                             " has no checkpoint yet; training starts fresh");
    } else if (fs::is_regular_file(fs::path(r) / "pretrained_model" / "train_config.json", ec)) {
      resume_from = r;
      a.push_back("--resume=true");
      a.push_back("--config_path=" + (fs::path(r) / "pretrained_model" / "train_config.json").string());
    } else if (!fs::exists(r, ec)) {
      t.warnings.push_back(with_origin(p, "resume_from_checkpoint") + "=" + r + ": no such checkpoint; training "
                           "starts fresh (as AITraining)");
    } else {
      refuse("resume_from_checkpoint", "not a checkpoint folder (<project>/checkpoints/<step>, holding "
                                       "pretrained_model/train_config.json); auto or latest resumes the project's last");
    }
  }

  // Where and how it runs: AITraining's project path (a relative name goes under
  // AUTOTRAIN_PROJECTS_DIR, else ~/trainings; the folder's name is letters, digits, - and _).
  // Resuming another project's checkpoint continues in that run folder, which is then the project.
  t.output_dir = resume_from.empty() ? project_folder(p.text("project_name"))
                                     : fs::path(resume_from).lexically_normal().parent_path().parent_path().string();
  if (const auto name = fs::path(t.output_dir).filename().string();
      name.empty() || name.size() > 50 || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") !=
                          std::string::npos)
    refuse("project_name", "project_name must be alphanumeric but can contain hyphens or underscores, at most 50 "
                           "characters (AITraining's rule, for the folder's name)");
  if (resume_from.empty()) a.push_back("--output_dir=" + t.output_dir);  // else the checkpoint's run folder
  const auto backend = p.is_none("distributed_backend") ? std::string() : p.text("distributed_backend");
  if (backend == "deepspeed") a.push_back("--distributed_backend=deepspeed");
  else if (backend == "ddp" || (backend.empty() && processes > 1)) a.push_back("--distributed_backend=ddp");
  else if (!backend.empty()) refuse("distributed_backend", "AITraining's values are ddp and deepspeed");
  if (processes > 1 || backend == "ddp" || backend == "deepspeed")
    a.push_back("--distributed.timeout_s=" + p.text("ddp_timeout"));

  // What shardkit does not do, each with its answer.
  if (p.flag("push_to_hub"))
    refuse("push_to_hub", "shardkit-llm writes the model to the project folder; upload it with hf upload");
  if (p.flag("unsloth")) refuse("unsloth", "unsloth is a Python library for CUDA; shardkit-llm trains without it");
  if (p.flag("use_flash_attention_2") || p.text("attn_implementation") == "flash_attention_2")
    problems.push_back("flash attention 2: shardkit computes attention with LibTorch's scaled_dot_product_attention "
                       "(which picks a flash kernel on GPUs itself); leave use_flash_attention_2 and "
                       "attn_implementation out");
  if (p.flag("auto_find_batch_size"))
    refuse("auto_find_batch_size", "give --batch-size (shardkit-train --dry_run shows the memory each rank needs)");
  static const std::set<std::string> kUnused = {"wandb_visualizer", "wandb_token", "hub_private"};  // no W&B, no Hub
  for (const auto& [name, param] : p.all())
    if (const auto* other = find_other_field(name); other && !kUnused.count(name) && !is_other_default(*other, param.value))
      problems.push_back(param.origin + "=" + *param.value + ": " + name +
                         " is an AITraining option shardkit-llm does not have; leave it out");

  if (!problems.empty()) {
    std::string text = "shardkit-llm cannot train this as asked:";
    for (const auto& problem : problems) text += "\n  " + problem;
    throw ConfigError(text);
  }
  return t;
}

}  // namespace shardkit::llm
