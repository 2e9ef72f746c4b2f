"""Opens a shardkit `dcp` checkpoint with PyTorch's own torch.distributed.checkpoint and compares
every entry with the `safetensors` checkpoint of the same run.

    python dcp_compare.py <dcp checkpoint>/<step> <safetensors checkpoint>/<step>

The model folder is loaded the way accelerate does (a nested {"model": {fqn: tensor}} state
dict), the optimizer folder as flattened keys. Prints "OK <n> entries" when every tensor is
equal, else what differs, and exits 1.
"""
import sys

import torch
import torch.distributed.checkpoint as dcp
from safetensors.torch import load_file


def main():
    dcp_dir, st_dir = sys.argv[1], sys.argv[2]
    model_dir = f"{dcp_dir}/pretrained_model/pytorch_model_fsdp_0"
    optim_dir = f"{dcp_dir}/training_state/optimizer_0"
    weights = load_file(f"{st_dir}/pretrained_model/model.safetensors")
    optim = load_file(f"{st_dir}/training_state/optimizer_state.safetensors")

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
    if problems:
        print("DIFFERENT:", ", ".join(problems))
        sys.exit(1)
    print(f"OK {len(weights) + len(optim)} entries")


if __name__ == "__main__":
    main()
