"""LLMTrainingParams: AITraining 0.0.54's fields, defaults and checks, without pydantic.

The fields shardkit acts on are listed with AITraining's types and defaults (the same table as
``shardkit-llm --help``; tests/test_aitraining.py checks that they agree). AITraining's other fields
(sweeps, DPO/RL, distillation, ...) are accepted by name; given a value, shardkit-llm answers that
it does not do them.
"""
import json
import os

# (name, type, default): type is "str", "int", "float", "bool", "block_size" or "mapping";
# a default of None is AITraining's Optional[...] = None.
FIELDS = [
    ("model", "str", "google/gemma-3-270m"),
    ("project_name", "str", "project-name"),
    ("data_path", "str", "data"),
    ("train_split", "str", "train"),
    ("valid_split", "str", None),
    ("max_samples", "int", None),
    ("add_eos_token", "bool", True),
    ("block_size", "block_size", -1),
    ("model_max_length", "int", 2048),
    ("padding", "str", "right"),
    ("trainer", "str", "default"),
    ("use_flash_attention_2", "bool", False),
    ("attn_implementation", "str", None),
    ("packing", "bool", None),
    ("log", "str", "wandb"),
    ("disable_gradient_checkpointing", "bool", False),
    ("logging_steps", "int", -1),
    ("eval_strategy", "str", "epoch"),
    ("save_strategy", "str", "epoch"),
    ("save_steps", "int", 500),
    ("save_total_limit", "int", 1),
    ("auto_find_batch_size", "bool", False),
    ("mixed_precision", "str", None),
    ("lr", "float", 3e-5),
    ("epochs", "int", 1),
    ("batch_size", "int", 2),
    ("warmup_ratio", "float", 0.1),
    ("gradient_accumulation", "int", 4),
    ("optimizer", "str", "adamw_torch"),
    ("scheduler", "str", "linear"),
    ("weight_decay", "float", 0.0),
    ("max_grad_norm", "float", 1.0),
    ("seed", "int", 42),
    ("chat_template", "str", None),
    ("response_only_loss", "bool", True),
    ("quantization", "str", None),
    ("target_modules", "str", "all-linear"),
    ("merge_adapter", "bool", True),
    ("peft", "bool", False),
    ("lora_r", "int", 16),
    ("lora_alpha", "int", 32),
    ("lora_dropout", "float", 0.05),
    ("text_column", "str", "text"),
    ("column_mapping", "mapping", None),
    ("push_to_hub", "bool", False),
    ("username", "str", None),
    ("token", "str", None),
    ("unsloth", "bool", False),
    ("distributed_backend", "str", None),
    ("resume_from_checkpoint", "str", None),
    ("ddp_timeout", "int", 7200),
]

# LLMTrainingParams' other fields (names only).
OTHER_FIELDS = frozenset("""
model_ref dpo_beta max_prompt_length max_completion_length prompt_text_column rejected_text_column image_column
auto_convert_dataset use_sharegpt_mapping sharegpt_mapping_enabled suggested_chat_template runtime_mapping map_eos_token
conversation_extension apply_chat_template save_processed_data repo_id use_distillation teacher_model
teacher_prompt_template student_prompt_template distill_temperature distill_alpha distill_max_teacher_length use_sweep
sweep_backend sweep_n_trials sweep_metric sweep_direction sweep_params post_trial_script wandb_sweep
wandb_sweep_project wandb_sweep_entity wandb_sweep_id wandb_run_id use_enhanced_eval eval_metrics eval_dataset_path
eval_batch_size eval_save_predictions eval_benchmark chat_format token_weights rl_gamma rl_gae_lambda rl_kl_coef
rl_value_loss_coef rl_clip_range rl_reward_fn rl_multi_objective rl_reward_weights rl_env_type rl_env_config
rl_reward_model_path rl_num_ppo_epochs rl_chunk_size rl_mini_batch_size rl_optimize_device_cache rl_value_clip_range
rl_max_new_tokens rl_top_k rl_top_p rl_temperature rl_env_module rl_env_class rl_num_generations rl_loss_type
rl_mask_truncated_completions use_vllm vllm_mode vllm_gpu_memory_utilization vllm_server_url
vllm_tensor_parallel_size vllm_server_gpus custom_loss custom_loss_weights custom_metrics use_forward_backward
forward_backward_loss_fn forward_backward_custom_fn gradient_accumulation_steps manual_optimizer_control
optimizer_step_frequency grad_clip_value sample_every_n_steps sample_prompts sample_temperature sample_top_k
sample_top_p manual_checkpoint_control save_state_every_n_steps load_state_from inference_prompts
inference_max_tokens inference_temperature inference_top_p inference_top_k inference_output
""".split())

_TYPES = {name: kind for name, kind, _ in FIELDS}
_DEFAULTS = {name: default for name, _, default in FIELDS}


def _check(name, kind, value):
    """The value as AITraining's model holds it (pydantic's lax coercion), or ValueError."""
    if value is None:
        return None

    def fail(expected):
        raise ValueError(f"LLMTrainingParams: {name}={value!r}: expected {expected}")

    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.lower() in ("true", "1", "yes")
        fail("a bool")
    if kind == "int":
        if isinstance(value, bool):
            fail("an integer")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                pass
        fail("an integer")
    if kind == "float":
        if isinstance(value, bool):
            fail("a number")
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        fail("a number")
    if kind == "block_size":
        if isinstance(value, (list, tuple)):
            return [_check(name, "int", v) for v in value]
        return _check(name, "int", value)
    if kind == "mapping":
        if isinstance(value, dict):
            return dict(value)
        fail("a mapping")
    if not isinstance(value, str):
        fail("a string")
    return value


def _project_path(project_name):
    """AITraining's rule: an absolute path as it is, else under AUTOTRAIN_PROJECTS_DIR (or ~/trainings)."""
    if not project_name or os.path.isabs(project_name):
        return project_name
    base = os.environ.get("AUTOTRAIN_PROJECTS_DIR") or os.path.join(os.path.expanduser("~"), "trainings")
    return os.path.normpath(os.path.join(base, project_name))


class LLMTrainingParams:
    """AITraining's LLMTrainingParams: keyword arguments per field, AITraining's defaults.

    Raises ValueError for a value of the wrong type or a project name AITraining refuses; an
    unknown keyword is refused too (AITraining ignores it with a warning: here it would silently
    change nothing, so it is named).
    """

    def __init__(self, **data):
        unknown = sorted(k for k in data if k not in _TYPES and k not in OTHER_FIELDS)
        if unknown:
            raise ValueError(f"LLMTrainingParams has no field(s) {', '.join(unknown)}")
        # AITraining's chat_template default follows the trainer: the tokenizer's own for sft,
        # none for the default trainer; "none" means None.
        if "chat_template" in data:
            if data["chat_template"] == "none":
                data["chat_template"] = None
        elif data.get("trainer", "default") in ("sft", "dpo", "orpo", "reward"):
            data["chat_template"] = "tokenizer"
        self._given = set(data)
        for name, kind, default in FIELDS:
            value = data[name] if name in data else default
            object.__setattr__(self, name, _check(name, kind, value))
        self._others = {k: v for k, v in data.items() if k in OTHER_FIELDS}
        self.project_name = _project_path(self.project_name)
        basename = os.path.basename(self.project_name or "")
        if self.project_name and not basename.replace("-", "").replace("_", "").isalnum():
            raise ValueError("project_name must be alphanumeric but can contain hyphens or underscores")

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        elif name in _TYPES:
            object.__setattr__(self, name, _check(name, _TYPES[name], value))
        else:
            raise AttributeError(f"LLMTrainingParams has no field {name}")

    def model_dump(self):
        """Every field's value (AITraining's model_dump), the other fields given included."""
        out = {name: getattr(self, name) for name, _, _ in FIELDS}
        out.update(self._others)
        return out

    def save(self, output_dir):
        """training_params.json in `output_dir`, the token left out (AITraining writes it masked)."""
        os.makedirs(output_dir, exist_ok=True)
        data = self.model_dump()
        data.pop("token", None)
        path = os.path.join(output_dir, "training_params.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=4)
        return path

    def __repr__(self):
        data = self.model_dump()
        data["token"] = "*****" if data.get("token") else None
        return f"LLMTrainingParams({data})"
