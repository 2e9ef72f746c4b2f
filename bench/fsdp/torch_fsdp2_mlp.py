"""PyTorch FSDP2 (fully_shard per block, then the root; Gloo, CPU) training loop with the mlp policy's model: the peer of shardkit's fsdp.

    python -m torch.distributed.run --nproc_per_node=2 bench/fsdp/torch_fsdp2_mlp.py --hidden_dim=512 --num_blocks=8

Data, step and throughput measure as bench/ddp/torch_ddp_mlp.py (forward, MSE, backward, loss.item(),
clip_grad_norm_, AdamW, zero_grad). --memory_steps=N instead runs N steps under torch.profiler with
profile_memory=True, started before the model is built, and reports each rank's peak of the running
sum of the CPU allocator's allocation/free events: the bytes of live tensors allocated since the start
(parameters, shards, gathered buffers, gradients, optimizer state, activations, the data table), the
same thing shardkit's counting CPU allocator measures. Profiling slows the steps, so throughput runs
and memory runs are separate. Rank 0 prints one JSON line and appends it to --out.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.fsdp import fully_shard

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from torch_mlp import Mlp  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ddp"))
from torch_ddp_mlp import make_task  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in [("hidden_dim", 512), ("num_blocks", 8), ("expansion", 2), ("batch_size", 32),
                          ("state_dim", 16), ("action_dim", 4), ("num_samples", 4096), ("steps", 40),
                          ("warmup_steps", 10), ("seed", 1000), ("num_threads", 1), ("memory_steps", 0)]:
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--weight_decay", type=float, default=0.01)
    p.add_argument("--grad_clip_norm", type=float, default=10.0)
    p.add_argument("--reshard_after_forward", type=int, default=1)
    p.add_argument("--program", default="py-fsdp2")
    p.add_argument("--out", default="")
    return p.parse_args()


def peak_of(prof):
    """Peak of the running sum of the profiler's CPU memory events (bytes), in time order."""
    # The raw allocator events (the op-level figures of prof.events() double-count nested ops).
    events = sorted((e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events()
                    if e.name() == "[memory]" and e.device_type() == torch.autograd.DeviceType.CPU)
    live = peak = 0
    for _, nbytes in events:
        live += nbytes
        peak = max(peak, live)
    return peak


def main():
    a = parse_args()
    torch.set_num_threads(a.num_threads)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    steps = a.memory_steps or a.steps
    warmup = 0 if a.memory_steps else a.warmup_steps
    prof = None
    if a.memory_steps:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True)
        prof.__enter__()

    states, actions = make_task(a)
    torch.manual_seed(a.seed)
    model = Mlp(a.state_dim, a.hidden_dim, a.num_blocks, a.expansion, a.action_dim)
    for block in model.blocks:
        fully_shard(block, reshard_after_forward=bool(a.reshard_after_forward))
    fully_shard(model, reshard_after_forward=bool(a.reshard_after_forward))
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)

    global_batch = a.batch_size * world
    batches_per_epoch = a.num_samples // global_batch
    epoch, batch_in_epoch = 0, 0
    perm = torch.randperm(a.num_samples, generator=torch.Generator().manual_seed(a.seed + epoch))
    loss_value = 0.0
    start = time.perf_counter()
    for step in range(steps):
        if step == warmup:
            dist.barrier()
            start = time.perf_counter()
        if batch_in_epoch == batches_per_epoch:
            epoch, batch_in_epoch = epoch + 1, 0
            perm = torch.randperm(a.num_samples, generator=torch.Generator().manual_seed(a.seed + epoch))
        first = batch_in_epoch * global_batch + rank * a.batch_size
        index = perm[first:first + a.batch_size]
        batch_in_epoch += 1
        loss = F.mse_loss(model(states.index_select(0, index)), actions.index_select(0, index))
        loss.backward()
        loss_value = loss.item()
        torch.nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip_norm)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    seconds = time.perf_counter() - start

    peak = 0
    if prof is not None:
        prof.__exit__(None, None, None)
        peak = peak_of(prof)
    measured = steps - warmup
    sums = torch.tensor([measured * a.batch_size / seconds, loss_value], dtype=torch.float64)
    dist.all_reduce(sums)
    peaks = [None] * world
    dist.all_gather_object(peaks, peak)
    if rank == 0:
        line = json.dumps({"program": a.program, "world_size": world, "batch_size": a.batch_size,
                           "steps": steps, "measured_steps": measured, "samples_per_s": sums[0].item(),
                           "final_loss": sums[1].item() / world, "peak_bytes_per_rank": peaks,
                           "torch": torch.__version__})
        print(line, flush=True)
        if a.out:
            with open(a.out, "a") as f:
                f.write(line + "\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
