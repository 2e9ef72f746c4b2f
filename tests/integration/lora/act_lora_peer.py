"""PEFT's side of the ACT LoRA test: PEFT loads shardkit's ACT adapter and merges it.

  act_lora_peer.py <base pretrained_model folder> <adapter folder> <out.safetensors>

For every module the adapter names, builds the torch module LeRobot's ACT has there
(nn.MultiheadAttention where the base has an in_proj_weight, nn.Linear otherwise) under the same
dotted name, with the base checkpoint's weights, and wraps the tree with
`PeftModel.from_pretrained(<tree>, <adapter folder>)`. Fails unless every tensor of
adapter_model.safetensors landed in a LoRA parameter of the PeftModel (equal values) and every
LoRA parameter came from the file; then writes `merge_and_unload()`'s weights of those modules.
Only names and arithmetic are checked here: the task type is left to PEFT's plain PeftModel.

PEFT up to 0.21.2 adds an attention's out_proj adapter twice when it merges (W + 2 B A s, in
merge_and_unload and in every forward; huggingface/peft#3774): the test accepts that for
out_proj.weight and says so.
"""
import json
import os
import sys

import torch
from peft import LoraConfig, PeftModel
from safetensors.torch import load_file, save_file

PREFIX = "base_model.model."


def module_at(root, dotted):
    """The module at `dotted` under `root`, made of empty containers where missing."""
    module = root
    for part in dotted.split("."):
        child = module._modules.get(part)
        if child is None:
            child = torch.nn.Module()
            module.add_module(part, child)
        module = child
    return module


def adapted_modules(adapter):
    """The base modules the adapter's tensors belong to ("<attn>.base_layer.out_proj" is <attn>'s)."""
    names = set()
    for key in adapter:
        if not key.startswith(PREFIX):
            sys.exit(f"{key}: not under {PREFIX}")
        name = key[len(PREFIX):]
        for part in (".lora_A.", ".lora_B."):
            if part in name:
                name = name[: name.index(part)]
        names.add(name.split(".base_layer")[0])
    return sorted(names)


def main(base_dir, adapter_dir, out):
    base = load_file(os.path.join(base_dir, "model.safetensors"))
    with open(os.path.join(base_dir, "config.json")) as f:
        heads = json.load(f)["n_heads"]
    adapter = load_file(os.path.join(adapter_dir, "adapter_model.safetensors"))
    root = torch.nn.Module()
    names = adapted_modules(adapter)
    for name in names:
        parent, _, leaf = name.rpartition(".")
        if name + ".in_proj_weight" in base:
            dim = base[name + ".in_proj_weight"].shape[1]
            module = torch.nn.MultiheadAttention(dim, heads)
            state = {k: base[f"{name}.{k}"] for k in ("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias")}
        else:
            weight = base[name + ".weight"]
            module = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=name + ".bias" in base)
            state = {k: base[f"{name}.{k}"] for k in ("weight", "bias") if f"{name}.{k}" in base}
        module.load_state_dict(state, strict=True)
        (module_at(root, parent) if parent else root).add_module(leaf, module)

    config = LoraConfig.from_pretrained(adapter_dir)
    config.task_type = None
    model = PeftModel.from_pretrained(root, adapter_dir, config=config)
    params = dict(model.named_parameters())
    used = set()
    for key, tensor in adapter.items():
        name = key[: -len(".weight")] + ".default.weight"
        if name not in params:
            sys.exit(f"{key} of adapter_model.safetensors has no parameter {name} in the PeftModel")
        if not torch.equal(params[name].detach(), tensor):
            sys.exit(f"{key}: the PeftModel's {name} differs from the file")
        used.add(name)
    lora = {n for n in params if ".lora_A." in n or ".lora_B." in n}
    if lora != used:
        sys.exit(f"LoRA parameters of the PeftModel not in the file: {sorted(lora - used)}")

    merged = model.merge_and_unload()
    save_file({k: v.detach().float().contiguous() for k, v in merged.state_dict().items()}, out)
    print(f"peft loaded {len(adapter)} adapter tensors onto {len(names)} modules ({', '.join(names)}) and merged them")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
