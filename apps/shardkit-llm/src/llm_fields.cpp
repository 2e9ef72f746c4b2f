// The LLMTrainingParams fields shardkit-llm acts on and the names of the others.
#include "llm_fields.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

namespace shardkit::llm {

const std::vector<Field>& fields() {
  static const std::vector<Field> all = {
      {"model", Kind::String, "google/gemma-3-270m"},
      {"project_name", Kind::String, "project-name"},
      {"data_path", Kind::String, "data"},
      {"train_split", Kind::String, "train"},
      {"valid_split", Kind::String, nullptr},
      {"max_samples", Kind::Int, nullptr},
      {"add_eos_token", Kind::Bool, "true"},
      {"block_size", Kind::BlockSize, "1024"},
      {"model_max_length", Kind::Int, "2048"},
      {"padding", Kind::String, "right"},
      {"trainer", Kind::String, "default"},
      {"use_flash_attention_2", Kind::Bool, "false"},
      {"attn_implementation", Kind::String, nullptr},
      {"packing", Kind::Bool, nullptr},
      {"log", Kind::String, "wandb"},
      {"disable_gradient_checkpointing", Kind::Bool, "false"},
      {"logging_steps", Kind::Int, "-1"},
      {"eval_strategy", Kind::String, "epoch"},
      {"save_strategy", Kind::String, "epoch"},
      {"save_steps", Kind::Int, "500"},
      {"save_total_limit", Kind::Int, "1"},
      {"auto_find_batch_size", Kind::Bool, "false"},
      {"mixed_precision", Kind::String, nullptr},
      {"lr", Kind::Float, "3e-05"},
      {"epochs", Kind::Int, "1"},
      {"batch_size", Kind::Int, "2"},
      {"warmup_ratio", Kind::Float, "0.1"},
      {"gradient_accumulation", Kind::Int, "4"},
      {"optimizer", Kind::String, "adamw_torch"},
      {"scheduler", Kind::String, "linear"},
      {"weight_decay", Kind::Float, "0.0"},
      {"max_grad_norm", Kind::Float, "1.0"},
      {"seed", Kind::Int, "42"},
      {"chat_template", Kind::String, nullptr},
      {"response_only_loss", Kind::Bool, "true"},
      {"quantization", Kind::String, nullptr},
      {"target_modules", Kind::String, "all-linear"},
      {"merge_adapter", Kind::Bool, "true"},
      {"peft", Kind::Bool, "false"},
      {"lora_r", Kind::Int, "16"},
      {"lora_alpha", Kind::Int, "32"},
      {"lora_dropout", Kind::Float, "0.05"},
      {"text_column", Kind::String, "text"},
      {"column_mapping", Kind::Mapping, nullptr},
      {"push_to_hub", Kind::Bool, "false"},
      {"username", Kind::String, nullptr},
      {"token", Kind::String, nullptr},
      {"unsloth", Kind::Bool, "false"},
      {"distributed_backend", Kind::String, nullptr},
      {"resume_from_checkpoint", Kind::String, nullptr},
      {"ddp_timeout", Kind::Int, "7200"},
  };
  return all;
}

std::string field_key(std::string_view name) {
  std::string s(name);
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

const Field* find_field(std::string_view name) {
  const auto wanted = field_key(name);
  for (const auto& f : fields())
    if (wanted == f.name) return &f;
  return nullptr;
}

const std::vector<OtherField>& other_fields() {
  // AITraining 0.0.54's defaults (AutoTrainParams' wandb_visualizer, wandb_token, hub_private last).
  static const std::vector<OtherField> all = {
      {"model_ref", nullptr}, {"dpo_beta", "0.1"}, {"max_prompt_length", "128"},
      {"max_completion_length", nullptr}, {"prompt_text_column", nullptr}, {"rejected_text_column", nullptr},
      {"image_column", nullptr}, {"auto_convert_dataset", "false"}, {"use_sharegpt_mapping", "false"},
      {"sharegpt_mapping_enabled", "false"}, {"suggested_chat_template", nullptr}, {"runtime_mapping", nullptr},
      {"map_eos_token", "false"}, {"conversation_extension", "1"}, {"apply_chat_template", "true"},
      {"save_processed_data", "auto"}, {"repo_id", nullptr}, {"use_distillation", "false"},
      {"teacher_model", nullptr}, {"teacher_prompt_template", nullptr}, {"student_prompt_template", "{input}"},
      {"distill_temperature", "3.0"}, {"distill_alpha", "0.7"}, {"distill_max_teacher_length", "512"},
      {"use_sweep", "false"}, {"sweep_backend", "optuna"}, {"sweep_n_trials", "10"}, {"sweep_metric", "eval_loss"},
      {"sweep_direction", "minimize"}, {"sweep_params", nullptr}, {"post_trial_script", nullptr},
      {"wandb_sweep", "false"}, {"wandb_sweep_project", nullptr}, {"wandb_sweep_entity", nullptr},
      {"wandb_sweep_id", nullptr}, {"wandb_run_id", nullptr}, {"use_enhanced_eval", "false"},
      {"eval_metrics", "perplexity"}, {"eval_dataset_path", nullptr}, {"eval_batch_size", "8"},
      {"eval_save_predictions", "false"}, {"eval_benchmark", nullptr}, {"chat_format", nullptr},
      {"token_weights", nullptr}, {"rl_gamma", "0.99"}, {"rl_gae_lambda", "0.95"}, {"rl_kl_coef", "0.1"},
      {"rl_value_loss_coef", "1.0"}, {"rl_clip_range", "0.2"}, {"rl_reward_fn", nullptr},
      {"rl_multi_objective", "false"}, {"rl_reward_weights", nullptr}, {"rl_env_type", nullptr},
      {"rl_env_config", nullptr}, {"rl_reward_model_path", nullptr}, {"rl_num_ppo_epochs", "4"},
      {"rl_chunk_size", "128"}, {"rl_mini_batch_size", "8"}, {"rl_optimize_device_cache", "true"},
      {"rl_value_clip_range", "0.2"}, {"rl_max_new_tokens", "128"}, {"rl_top_k", "50"}, {"rl_top_p", "1.0"},
      {"rl_temperature", "1.0"}, {"rl_env_module", nullptr}, {"rl_env_class", nullptr},
      {"rl_num_generations", "4"}, {"rl_loss_type", "grpo"}, {"rl_mask_truncated_completions", "false"},
      {"use_vllm", "false"}, {"vllm_mode", "colocate"}, {"vllm_gpu_memory_utilization", "0.3"},
      {"vllm_server_url", nullptr}, {"vllm_tensor_parallel_size", "1"}, {"vllm_server_gpus", "1"},
      {"custom_loss", nullptr}, {"custom_loss_weights", nullptr}, {"custom_metrics", nullptr},
      {"use_forward_backward", "false"}, {"forward_backward_loss_fn", nullptr},
      {"forward_backward_custom_fn", nullptr}, {"gradient_accumulation_steps", "1"},
      {"manual_optimizer_control", "false"}, {"optimizer_step_frequency", "1"}, {"grad_clip_value", "1.0"},
      {"sample_every_n_steps", "0"}, {"sample_prompts", nullptr}, {"sample_temperature", "1.0"},
      {"sample_top_k", "50"}, {"sample_top_p", "1.0"}, {"manual_checkpoint_control", "false"},
      {"save_state_every_n_steps", "0"}, {"load_state_from", nullptr}, {"inference_prompts", nullptr},
      {"inference_max_tokens", "256"}, {"inference_temperature", "1.0"}, {"inference_top_p", "1.0"},
      {"inference_top_k", "50"}, {"inference_output", nullptr}, {"wandb_visualizer", nullptr},
      {"wandb_token", nullptr}, {"hub_private", "true"}};
  return all;
}

const OtherField* find_other_field(std::string_view name) {
  const auto wanted = field_key(name);
  for (const auto& f : other_fields())
    if (wanted == f.name) return &f;
  return nullptr;
}

bool is_other_field(std::string_view name) { return find_other_field(name) != nullptr; }

bool is_other_default(const OtherField& field, const std::optional<std::string>& value) {
  if (!field.default_value || !value) return !field.default_value && !value;
  const std::string want = field.default_value;
  std::string got = *value;
  std::transform(got.begin(), got.end(), got.begin(), [](unsigned char c) { return std::tolower(c); });
  if (got == want) return true;
  try {
    std::size_t a = 0, b = 0;
    const auto x = std::stod(got, &a), y = std::stod(want, &b);
    return a == got.size() && b == want.size() && x == y;
  } catch (const std::exception&) {
    return *value == want;
  }
}

}  // namespace shardkit::llm
