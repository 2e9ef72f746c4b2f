"""PyTorch DistributedDataParallel (Gloo, CPU) training loop with the mlp policy's model: the peer of shardkit's ddp.

Start it with torchrun (the SDK venv's, PyTorch 2.15), as many processes as shardkit-run starts
shardkit-train:

    python -m torch.distributed.run --nproc_per_node=2 --master_port=29511 \
        bench/ddp/torch_ddp_mlp.py --hidden_dim=256 --num_blocks=2 --batch_size=32 --steps=60

Each process trains the model of bench/torch_mlp.py (the same architecture as shardkit's mlp
policy) on its own slice of every global batch, as shardkit's data loader does: one
permutation of an in-memory table per epoch, the same on every rank, a global batch of
batch_size x world_size samples cut into one slice per rank, read with index_select. Per step:
forward, MSE, backward (DDP all-reduces the gradients in buckets during backward), loss.item(),
clip_grad_norm_, AdamW, zero_grad(set_to_none=True): what shardkit-train does per step.

Throughput is measured the way shardkit logs samples_per_s: each rank times the steps after
--warmup_steps (after a barrier, as shardkit's timing restarts after a log line's all-reduce),
divides its samples by its seconds, and the ranks' rates are summed. Rank 0 prints one JSON line
{"program": .., "world_size": .., "samples_per_s": <whole cluster>, ...} and appends it to --out.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

# The model lives once, in bench/torch_mlp.py (shared with the single-process benchmark).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from torch_mlp import Mlp  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in [("hidden_dim", 256), ("num_blocks", 2), ("expansion", 2), ("batch_size", 32),
                          ("state_dim", 16), ("action_dim", 4), ("num_samples", 4096), ("steps", 60),
                          ("warmup_steps", 10), ("seed", 1000), ("num_threads", 1)]:
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--weight_decay", type=float, default=0.01)
    p.add_argument("--grad_clip_norm", type=float, default=10.0)
    p.add_argument("--bucket_cap_mb", type=float, default=25.0, help="DDP bucket cap (PyTorch's default 25)")
    p.add_argument("--program", default="python-ddp", help="name written into the JSON line")
    p.add_argument("--out", default="", help="rank 0 appends the JSON line to this file too")
    p.add_argument("--cpu_bind", type=int, default=0,
                   help="1: pin each local rank to its own share of the CPUs, as shardkit-run --cpu-bind=cores")
    a = p.parse_args()
    if not 0 <= a.warmup_steps < a.steps:
        p.error("--warmup_steps must be at least 0 and below --steps")
    return a


def make_task(a):
    """States and a teacher network's actions, like shardkit's synthetic dataset (same shapes)."""
    gen = torch.Generator().manual_seed(a.seed)
    states = torch.randn(a.num_samples, a.state_dim, generator=gen)
    w1 = torch.randn(a.state_dim, 32, generator=gen) / a.state_dim ** 0.5
    w2 = torch.randn(32, a.action_dim, generator=gen) / 32 ** 0.5
    actions = torch.tanh(states @ w1) @ w2 + 0.01 * torch.randn(a.num_samples, a.action_dim, generator=gen)
    return states, actions


def bind_cpus():
    """This local rank's contiguous share of the CPUs it may use, as shardkit-run --cpu-bind=cores."""
    cpus = sorted(os.sched_getaffinity(0))
    ranks, rank = int(os.environ["LOCAL_WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
    if len(cpus) < ranks:
        share = [cpus[rank % len(cpus)]]
    else:
        start = rank * (len(cpus) // ranks) + min(rank, len(cpus) % ranks)
        share = cpus[start:start + len(cpus) // ranks + (1 if rank < len(cpus) % ranks else 0)]
    os.sched_setaffinity(0, share)


def main():
    a = parse_args()
    if a.cpu_bind:
        bind_cpus()
    torch.set_num_threads(a.num_threads)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    states, actions = make_task(a)
    torch.manual_seed(a.seed)  # DDP broadcasts rank 0's parameters anyway
    model = DistributedDataParallel(Mlp(a.state_dim, a.hidden_dim, a.num_blocks, a.expansion, a.action_dim),
                                    bucket_cap_mb=a.bucket_cap_mb)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)

    global_batch = a.batch_size * world
    batches_per_epoch = a.num_samples // global_batch
    if batches_per_epoch < 1:
        raise SystemExit(f"--num_samples={a.num_samples} is below one global batch ({global_batch})")
    epoch, batch_in_epoch = 0, 0
    perm = torch.randperm(a.num_samples, generator=torch.Generator().manual_seed(a.seed + epoch))

    loss_value = 0.0
    start = time.perf_counter()
    for step in range(a.steps):
        if step == a.warmup_steps:
            dist.barrier()
            start = time.perf_counter()
        if batch_in_epoch == batches_per_epoch:
            epoch, batch_in_epoch = epoch + 1, 0
            perm = torch.randperm(a.num_samples, generator=torch.Generator().manual_seed(a.seed + epoch))
        first = batch_in_epoch * global_batch + rank * a.batch_size
        index = perm[first:first + a.batch_size]
        batch_in_epoch += 1
        x = states.index_select(0, index)
        y = actions.index_select(0, index)

        loss = F.mse_loss(model(x), y)
        loss.backward()
        loss_value = loss.item()
        torch.nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip_norm)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    seconds = time.perf_counter() - start

    measured = a.steps - a.warmup_steps
    # Sum of the ranks' rates (shardkit's samples_per_s), mean loss, slowest rank's time.
    sums = torch.tensor([measured * a.batch_size / seconds, loss_value], dtype=torch.float64)
    dist.all_reduce(sums)
    slowest = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    if rank == 0:
        # Bucket sizes in bytes after DDP's rebuild at the first step (a private helper; may be absent).
        logging_data = getattr(model, "_get_ddp_logging_data", dict)()
        line = json.dumps({"program": a.program, "world_size": world, "batch_size": a.batch_size,
                           "steps": a.steps, "measured_steps": measured,
                           "samples_per_s": sums[0].item(), "seconds": slowest.item(),
                           "final_loss": sums[1].item() / world,
                           "bucket_sizes": logging_data.get("bucket_sizes", ""), "torch": torch.__version__})
        print(line, flush=True)
        if a.out:
            with open(a.out, "a") as f:
                f.write(line + "\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
