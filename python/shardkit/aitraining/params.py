"""LLMTrainingParams: AITraining 0.0.54's fields, defaults and checks, without pydantic.

The fields shardkit acts on are listed with AITraining's types and defaults (the same table as
``shardkit-llm --help``; tests/test_aitraining.py checks that they agree). AITraining's other fields
(sweeps, DPO/RL, distillation, ...) are accepted; given a value other than AITraining's default,
shardkit-llm answers that it does not do them.
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

# LLMTrainingParams' other fields with AITraining's defaults (AutoTrainParams' wandb_visualizer,
# wandb_token and hub_private last); shardkit-llm refuses values other than these.
OTHER_FIELDS = {
    "model_ref": None,
    "dpo_beta": 0.1,
    "max_prompt_length": 128,
    "max_completion_length": None,
    "prompt_text_column": None,
    "rejected_text_column": None,
    "image_column": None,
    "auto_convert_dataset": False,
    "use_sharegpt_mapping": False,
    "sharegpt_mapping_enabled": False,
    "suggested_chat_template": None,
    "runtime_mapping": None,
    "map_eos_token": False,
    "conversation_extension": 1,
    "apply_chat_template": True,
    "save_processed_data": 'auto',
    "repo_id": None,
    "use_distillation": False,
    "teacher_model": None,
    "teacher_prompt_template": None,
    "student_prompt_template": '{input}',
    "distill_temperature": 3.0,
    "distill_alpha": 0.7,
    "distill_max_teacher_length": 512,
    "use_sweep": False,
    "sweep_backend": 'optuna',
    "sweep_n_trials": 10,
    "sweep_metric": 'eval_loss',
    "sweep_direction": 'minimize',
    "sweep_params": None,
    "post_trial_script": None,
    "wandb_sweep": False,
    "wandb_sweep_project": None,
    "wandb_sweep_entity": None,
    "wandb_sweep_id": None,
    "wandb_run_id": None,
    "use_enhanced_eval": False,
    "eval_metrics": 'perplexity',
    "eval_dataset_path": None,
    "eval_batch_size": 8,
    "eval_save_predictions": False,
    "eval_benchmark": None,
    "chat_format": None,
    "token_weights": None,
    "rl_gamma": 0.99,
    "rl_gae_lambda": 0.95,
    "rl_kl_coef": 0.1,
    "rl_value_loss_coef": 1.0,
    "rl_clip_range": 0.2,
    "rl_reward_fn": None,
    "rl_multi_objective": False,
    "rl_reward_weights": None,
    "rl_env_type": None,
    "rl_env_config": None,
    "rl_reward_model_path": None,
    "rl_num_ppo_epochs": 4,
    "rl_chunk_size": 128,
    "rl_mini_batch_size": 8,
    "rl_optimize_device_cache": True,
    "rl_value_clip_range": 0.2,
    "rl_max_new_tokens": 128,
    "rl_top_k": 50,
    "rl_top_p": 1.0,
    "rl_temperature": 1.0,
    "rl_env_module": None,
    "rl_env_class": None,
    "rl_num_generations": 4,
    "rl_loss_type": 'grpo',
    "rl_mask_truncated_completions": False,
    "use_vllm": False,
    "vllm_mode": 'colocate',
    "vllm_gpu_memory_utilization": 0.3,
    "vllm_server_url": None,
    "vllm_tensor_parallel_size": 1,
    "vllm_server_gpus": 1,
    "custom_loss": None,
    "custom_loss_weights": None,
    "custom_metrics": None,
    "use_forward_backward": False,
    "forward_backward_loss_fn": None,
    "forward_backward_custom_fn": None,
    "gradient_accumulation_steps": 1,
    "manual_optimizer_control": False,
    "optimizer_step_frequency": 1,
    "grad_clip_value": 1.0,
    "sample_every_n_steps": 0,
    "sample_prompts": None,
    "sample_temperature": 1.0,
    "sample_top_k": 50,
    "sample_top_p": 1.0,
    "manual_checkpoint_control": False,
    "save_state_every_n_steps": 0,
    "load_state_from": None,
    "inference_prompts": None,
    "inference_max_tokens": 256,
    "inference_temperature": 1.0,
    "inference_top_p": 1.0,
    "inference_top_k": 50,
    "inference_output": None,
    "wandb_visualizer": None,
    "wandb_token": None,
    "hub_private": True,
}

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
    base = os.environ.get("AUTOTRAIN_PROJECTS_DIR")
    if base is None:
        base = os.path.join(os.path.expanduser("~"), "trainings")
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
            if value is None and default is not None:
                raise ValueError(f"LLMTrainingParams: {name}=None: {name} takes a value (AITraining's default: "
                                 f"{default!r})")
            object.__setattr__(self, name, _check(name, kind, value))
        self._others = {k: v for k, v in data.items() if k in OTHER_FIELDS}
        self.project_name = _project_path(self.project_name)
        basename = os.path.basename(self.project_name or "")
        if self.project_name and (not basename.replace("-", "").replace("_", "").isalnum() or len(basename) > 50):
            raise ValueError("project_name must be alphanumeric but can contain hyphens or underscores, at most 50 "
                             "characters")

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
        """training_params.json in `output_dir`, the token left out (as the project's copy AITraining keeps)."""
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
