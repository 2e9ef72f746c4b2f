"""Writes a shardkit model.safetensors as a DCP checkpoint from 2 ranks with PyTorch's own dcp.save,
each tensor sharded on dim 0 as FSDP2 does (DTensor, Shard(0)), into <out>/pytorch_model_fsdp_0.

    torchrun --standalone --nproc-per-node=2 torch_dcp_save.py <model.safetensors> <pretrained_model dir>
"""
import sys

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from safetensors.torch import load_file
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard, distribute_tensor


def main():
    dist.init_process_group("gloo")
    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    weights = load_file(sys.argv[1])
    model = {name: distribute_tensor(t, mesh, [Shard(0)]) if t.dim() > 0 else t for name, t in weights.items()}
    dcp.save({"model": model}, checkpoint_id=f"{sys.argv[2]}/pytorch_model_fsdp_0")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
