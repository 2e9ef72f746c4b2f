"""transformers' side of the llama tests: makes tiny random Llama (and Qwen2, Qwen3, Mistral)
folders and computes their logits.

  llama_peer.py make <folder>:<tied 0|1>:<shard 0|1>[:<dtype float32|bfloat16>[:<family>]] ...
  llama_peer.py logits <folder> <out.safetensors> [<folder> <out.safetensors> ...]
  llama_peer.py resize <folder> <count> <out.safetensors>

(several folders per call: importing transformers takes seconds)

`make` saves a LlamaForCausalLM (2 layers, 4 heads, 2 key/value heads, Llama 3 rope scaling) with
weights scaled up from transformers' initialisation so that logits are far from uniform, plus
small tokenizer files. <family> qwen2, qwen3 or mistral makes that family's model of the same
sizes instead, each with what sets it apart: Qwen2 (q/k/v biases, rope_theta 1e6, a sliding
window of 5 in layer 1 by max_window_layers), Qwen3 (q_norm/k_norm, head_dim 16 unlike
hidden_size / heads, attention_bias, a window of 4 in layer 0 by layer_types), Mistral (a window
of 6 in every layer). The batch is 12 tokens long: each window cuts off keys. `logits` loads <folder> strictly (no missing, unexpected or mismatched
key) and writes a right-padded batch (input_ids, attention_mask, labels) with transformers'
logits and mean loss for it. `resize` loads <folder>, calls resize_token_embeddings(<count>) (mean
resizing, transformers' default) and writes the input embedding and output layer weights it ends with.
"""
import json
import sys

import torch
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config

VOCAB = 128


SEEDS = {"llama": 0, "qwen2": 20, "qwen3": 40, "mistral": 60}


def config_of(family, tied):
    sizes = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, max_position_embeddings=256, rms_norm_eps=1e-5, tie_word_embeddings=tied,
                 bos_token_id=1, eos_token_id=2)
    if family == "qwen2":
        return Qwen2Config(**sizes, rope_theta=1e6, use_sliding_window=True, sliding_window=5, max_window_layers=1)
    if family == "qwen3":
        return Qwen3Config(**sizes, rope_theta=1e6, head_dim=16, attention_bias=True, use_sliding_window=True,
                           sliding_window=4, layer_types=["sliding_attention", "full_attention"])
    if family == "mistral":
        return MistralConfig(**sizes, rope_theta=10000.0, sliding_window=6)
    return LlamaConfig(**sizes, rope_theta=10000.0,
                       rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                     "high_freq_factor": 4.0, "original_max_position_embeddings": 64})


def make(folder, tied, shard, dtype="float32", family="llama"):
    torch.manual_seed((11 if tied else 12) + SEEDS[family])
    config = config_of(family, tied)
    model = AutoModelForCausalLM.from_config(config)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.2 * torch.randn_like(p))
            else:
                p.copy_(0.25 * torch.randn_like(p))
    model = model.to(getattr(torch, dtype))
    model.save_pretrained(folder, max_shard_size="40KB" if shard else "1GB")
    with open(f"{folder}/tokenizer_config.json", "w") as f:
        json.dump({"model_max_length": 256, "tokenizer_class": "PreTrainedTokenizerFast"}, f)
    with open(f"{folder}/tokenizer.json", "w") as f:
        json.dump({"version": "1.0", "model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}, f)


def batch():
    g = torch.Generator().manual_seed(3)
    lengths = [12, 7, 3, 10]
    ids = torch.randint(0, VOCAB, (len(lengths), 12), generator=g)
    mask = torch.zeros_like(ids)
    for i, n in enumerate(lengths):
        mask[i, :n] = 1
    ids = ids * mask  # padding id 0, as the text dataset pads
    labels = ids.masked_fill(mask == 0, -100)
    labels[1, :2] = -100  # a prompt without labels
    return ids, mask, labels


def logits(folder, out):
    model, info = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, output_loading_info=True)
    problems = {k: v for k, v in info.items() if v}
    if problems:
        sys.exit(f"transformers did not load {folder} strictly: {problems}")
    model.eval()
    ids, mask, labels = batch()
    with torch.no_grad():
        result = model(input_ids=ids, attention_mask=mask, labels=labels)
    save_file({"input_ids": ids, "attention_mask": mask, "labels": labels,
               "logits": result.logits.float().contiguous(), "loss": result.loss.reshape(1).float()}, out)
    print(f"transformers loaded {folder} strictly ({type(model).__name__}, dtype {model.dtype})")


def resize(folder, count, out):
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    model.resize_token_embeddings(count)
    save_file({"embed_tokens": model.get_input_embeddings().weight.detach().contiguous(),
               "lm_head": model.get_output_embeddings().weight.detach().clone().contiguous(),
               "vocab_size": torch.tensor([model.config.vocab_size])}, out)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        for spec in sys.argv[2:]:
            folder, tied, shard, *dtype = spec.split(":")
            make(folder, tied == "1", shard == "1", *dtype)
    elif sys.argv[1] == "logits":
        for folder, out in zip(sys.argv[2::2], sys.argv[3::2]):
            logits(folder, out)
    elif sys.argv[1] == "resize":
        resize(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(f"unknown command {sys.argv[1]}")
