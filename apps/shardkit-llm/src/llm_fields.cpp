// The LLMTrainingParams fields shardkit-llm acts on and the names of the others.
#include "llm_fields.hpp"

#include <algorithm>
#include <array>

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

namespace {

std::string underscored(std::string_view name) {
  std::string s(name);
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

}  // namespace

const Field* find_field(std::string_view name) {
  const auto wanted = underscored(name);
  for (const auto& f : fields())
    if (wanted == f.name) return &f;
  return nullptr;
}

bool is_other_field(std::string_view name) {
  static constexpr std::array<std::string_view, 99> kOthers = {
      "model_ref", "dpo_beta", "max_prompt_length", "max_completion_length", "prompt_text_column",
      "rejected_text_column", "image_column", "auto_convert_dataset", "use_sharegpt_mapping",
      "sharegpt_mapping_enabled", "suggested_chat_template", "runtime_mapping", "map_eos_token",
      "conversation_extension", "apply_chat_template", "save_processed_data", "repo_id", "use_distillation",
      "teacher_model", "teacher_prompt_template", "student_prompt_template", "distill_temperature", "distill_alpha",
      "distill_max_teacher_length", "use_sweep", "sweep_backend", "sweep_n_trials", "sweep_metric", "sweep_direction",
      "sweep_params", "post_trial_script", "wandb_sweep", "wandb_sweep_project", "wandb_sweep_entity",
      "wandb_sweep_id", "wandb_run_id", "use_enhanced_eval", "eval_metrics", "eval_dataset_path", "eval_batch_size",
      "eval_save_predictions", "eval_benchmark", "chat_format", "token_weights", "rl_gamma", "rl_gae_lambda",
      "rl_kl_coef", "rl_value_loss_coef", "rl_clip_range", "rl_reward_fn", "rl_multi_objective", "rl_reward_weights",
      "rl_env_type", "rl_env_config", "rl_reward_model_path", "rl_num_ppo_epochs", "rl_chunk_size",
      "rl_mini_batch_size", "rl_optimize_device_cache", "rl_value_clip_range", "rl_max_new_tokens", "rl_top_k",
      "rl_top_p", "rl_temperature", "rl_env_module", "rl_env_class", "rl_num_generations", "rl_loss_type",
      "rl_mask_truncated_completions", "use_vllm", "vllm_mode", "vllm_gpu_memory_utilization", "vllm_server_url",
      "vllm_tensor_parallel_size", "vllm_server_gpus", "custom_loss", "custom_loss_weights", "custom_metrics",
      "use_forward_backward", "forward_backward_loss_fn", "forward_backward_custom_fn", "gradient_accumulation_steps",
      "manual_optimizer_control", "optimizer_step_frequency", "grad_clip_value", "sample_every_n_steps",
      "sample_prompts", "sample_temperature", "sample_top_k", "sample_top_p", "manual_checkpoint_control",
      "save_state_every_n_steps", "load_state_from", "inference_prompts", "inference_max_tokens",
      "inference_temperature", "inference_top_p", "inference_top_k", "inference_output"};
  const auto wanted = underscored(name);
  return std::find(kOthers.begin(), kOthers.end(), wanted) != kOthers.end();
}

}  // namespace shardkit::llm
