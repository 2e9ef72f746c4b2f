"""Opens a shardkit `dcp` checkpoint with PyTorch's own torch.distributed.checkpoint and compares
every entry with the `safetensors` checkpoint of the same run.

    python dcp_compare.py <dcp checkpoint>/<step> <safetensors checkpoint>/<step>

The model folder is loaded the way accelerate does (a nested {"model": {fqn: tensor}} state
dict), the optimizer folder as flattened keys, and then both again into a plain module and a
torch.optim.AdamW through torch.distributed.checkpoint.state_dict, as accelerate loads them.
Prints "OK <n> entries" when every tensor and the param group are equal, else what differs,
and exits 1.
"""
import json
import sys

import torch
import torch.distributed.checkpoint as dcp
from safetensors.torch import load_file
from torch.distributed.checkpoint.state_dict import (get_model_state_dict, get_optimizer_state_dict,
                                                     set_model_state_dict, set_optimizer_state_dict)


def plain_module(weights):
    """A module tree whose parameters have the names and shapes of `weights` (NaN-filled)."""
    root = torch.nn.Module()
    for name, value in weights.items():
        *path, leaf = name.split(".")
        module = root
        for part in path:
            if not hasattr(module, part):
                module.add_module(part, torch.nn.Module())
            module = getattr(module, part)
        module.register_parameter(leaf, torch.nn.Parameter(torch.full_like(value, float("nan"))))
    return root


def module_and_adamw(model_dir, optim_dir, weights, optim, groups):
    """Loads the folders into a fresh module + AdamW (other hyper-parameters than saved)."""
    module = plain_module(weights)
    opt = torch.optim.AdamW(module.parameters(), lr=0.5, betas=(0.5, 0.5), eps=0.5, weight_decay=0.5)
    model_sd = {"model": get_model_state_dict(module)}
    dcp.load(model_sd, checkpoint_id=model_dir)
    set_model_state_dict(module, model_sd["model"])
    optim_sd = {"optimizer": get_optimizer_state_dict(module, opt)}
    dcp.load(optim_sd, checkpoint_id=optim_dir)
    set_optimizer_state_dict(module, opt, optim_sd["optimizer"])
    problems = []
    named = dict(module.named_parameters())
    for name, expected in weights.items():
        if not torch.equal(named[name].detach(), expected):
            problems.append(f"module {name}")
    by_param = {p: n for n, p in named.items()}
    for param, state in opt.state.items():
        for slot, value in state.items():
            expected = optim[f"state.{by_param[param]}.{slot}"]
            if not torch.equal(value, expected):
                problems.append(f"AdamW state {by_param[param]}.{slot}")
    if len(opt.state) != len(named):
        problems.append(f"AdamW has state for {len(opt.state)} of {len(named)} parameters")
    group, saved = opt.param_groups[0], groups[0]
    for field in ("lr", "eps", "weight_decay"):
        if group[field] != saved[field]:
            problems.append(f"param group {field}: {group[field]} != {saved[field]}")
    if list(group["betas"]) != saved["betas"]:
        problems.append(f"param group betas: {group['betas']} != {saved['betas']}")
    return problems


def main():
    dcp_dir, st_dir = sys.argv[1], sys.argv[2]
    model_dir = f"{dcp_dir}/pretrained_model/pytorch_model_fsdp_0"
    optim_dir = f"{dcp_dir}/training_state/optimizer_0"
    weights = load_file(f"{st_dir}/pretrained_model/model.safetensors")
    optim = load_file(f"{st_dir}/training_state/optimizer_state.safetensors")
    with open(f"{st_dir}/training_state/optimizer_param_groups.json") as f:
        groups = json.load(f)

    model = {"model": {k: torch.full_like(v, float("nan")) for k, v in weights.items()}}
    dcp.load(model, checkpoint_id=model_dir)
    state = {"optimizer." + k: torch.full_like(v, float("nan")) if v.is_floating_point() else torch.zeros_like(v)
             for k, v in optim.items()}
    dcp.load(state, checkpoint_id=optim_dir)

    problems = []
    for name, expected in weights.items():
        if not torch.equal(model["model"][name], expected):
            problems.append(f"model.{name}")
    for name, expected in optim.items():
        if not torch.equal(state["optimizer." + name], expected):
            problems.append(f"optimizer.{name}")
    saved = set(dcp.FileSystemReader(model_dir).read_metadata().state_dict_metadata)
    if saved != {f"model.{k}" for k in weights}:
        problems.append(f"model keys differ: {sorted(saved ^ {f'model.{k}' for k in weights})}")
    problems += module_and_adamw(model_dir, optim_dir, weights, optim, groups)
    if problems:
        print("DIFFERENT:", ", ".join(problems))
        sys.exit(1)
    print(f"OK {len(weights) + len(optim)} entries, also through a module and torch.optim.AdamW")


if __name__ == "__main__":
    main()
