"""DCP checkpoint I/O throughput of PyTorch's torch.distributed.checkpoint: the peer of dcp_bench.cpp.

Same state (NUM_TENSORS float32 tensors "model.layers.<i>.weight" of [rows, 1024], SIZE_MB in
all, values from expected()), same modes, same JSON lines ("program": "pytorch"):

    torch_dcp_bench.py save-load --dir=D      dcp.save R times (fresh folders, the last kept as
                                              D/ckpt) with no process group, then dcp.load R
                                              times into preallocated tensors
    torchrun --nproc_per_node=2 torch_dcp_bench.py save-rank --dir=D
                                              each rank saves its Shard(0) DTensor slice (Gloo)
    torch_dcp_bench.py load --dir=D --op=NAME dcp.load of folder D (any number of saved ranks,
                                              either program's) whole into one process

Every load is compared element for element with expected(); a mismatch exits 1.
"""
import argparse
import json
import os
import shutil
import sys
import time
import warnings

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp

COLS = 1024


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["save-load", "save-rank", "load"])
    p.add_argument("--dir", required=True)
    p.add_argument("--op", default="")
    p.add_argument("--out", default="")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--num_tensors", type=int, default=8)
    p.add_argument("--size_mb", type=int, default=256)
    args = p.parse_args()
    if args.size_mb * 256 % args.num_tensors or rows(args) < 2 or rows(args) % 2:
        p.error("--size_mb and --num_tensors must give every tensor an even number of 1024-float rows")
    return args


def rows(args):
    return args.size_mb * 256 // args.num_tensors


def key_of(i):
    return f"layers.{i}.weight"  # "model." comes from the outer dict, as accelerate nests it


def expected(args, i):
    """Element k of tensor i is (k mod 1000003) / 4 + i, exact in float32 (dcp_bench.cpp's too)."""
    return (torch.arange(rows(args) * COLS, dtype=torch.long).remainder(1000003).to(torch.float32)
            .mul_(0.25).add_(float(i)).reshape(rows(args), COLS))


def folder_bytes(folder):
    return sum(e.stat().st_size for e in os.scandir(folder) if e.is_file())


def emit(args, op, ranks, folder, secs):
    line = json.dumps({"program": "pytorch", "op": op, "bytes": rows(args) * COLS * 4 * args.num_tensors,
                       "file_bytes": folder_bytes(folder), "ranks": ranks, "num_tensors": args.num_tensors,
                       "seconds": secs})
    print(line, flush=True)
    if args.out:
        with open(args.out, "a") as out:
            out.write(line + "\n")


def fresh_folder(base, rep):
    """Repetition `rep`'s folder, the previous one removed first (not timed)."""
    path = os.path.join(base, f"save.{rep}")
    shutil.rmtree(path, ignore_errors=True)
    if rep > 0:
        shutil.rmtree(os.path.join(base, f"save.{rep - 1}"), ignore_errors=True)
    return path


def keep_as_ckpt(base, folder):
    ckpt = os.path.join(base, "ckpt")
    shutil.rmtree(ckpt, ignore_errors=True)
    os.rename(folder, ckpt)
    return ckpt


def timed_loads(args, folder):
    """dcp.load of `folder` whole into preallocated tensors, R times, each load checked."""
    reference = [expected(args, i) for i in range(args.num_tensors)]
    wanted = [torch.empty(rows(args), COLS) for _ in range(args.num_tensors)]
    secs = []
    for _ in range(args.reps):
        for t in wanted:
            t.fill_(-1)  # touched and stale: a skipped copy shows
        state = {"model": {key_of(i): t for i, t in enumerate(wanted)}}
        start = time.perf_counter()
        dcp.load(state, checkpoint_id=folder)
        secs.append(time.perf_counter() - start)
        for i in range(args.num_tensors):
            got = state["model"][key_of(i)]
            if got is not wanted[i]:
                sys.exit(f"torch_dcp_bench.py: load of {folder}: model.{key_of(i)} was replaced, not loaded in place")
            if not torch.equal(got, reference[i]):
                sys.exit(f"torch_dcp_bench.py: load of {folder}: model.{key_of(i)} differs from what was saved")
    return secs


def save_load(args):
    state = {"model": {key_of(i): expected(args, i) for i in range(args.num_tensors)}}
    os.makedirs(args.dir, exist_ok=True)
    secs = []
    for r in range(args.reps):
        folder = fresh_folder(args.dir, r)
        start = time.perf_counter()
        dcp.save(state, checkpoint_id=folder)
        secs.append(time.perf_counter() - start)
    ckpt = keep_as_ckpt(args.dir, folder)
    emit(args, "save", 1, ckpt, secs)
    emit(args, "load", 1, ckpt, timed_loads(args, ckpt))


def save_rank(args):
    """One rank of a torchrun save: this rank's Shard(0) slice of every tensor, as FSDP2 holds it."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh("cpu", (world,))
    # distribute_tensor keeps rank r's slice as a local copy; the full tensors are then dropped.
    state = {"model": {key_of(i): distribute_tensor(expected(args, i), mesh, [Shard(0)])
                       for i in range(args.num_tensors)}}
    if rank == 0:
        os.makedirs(args.dir, exist_ok=True)
    secs, folder = [], None
    for r in range(args.reps):
        folder = fresh_folder(args.dir, r) if rank == 0 else os.path.join(args.dir, f"save.{r}")
        dist.barrier()
        start = time.perf_counter()
        dcp.save(state, checkpoint_id=folder)
        dist.barrier()
        secs.append(time.perf_counter() - start)
    if rank == 0:
        emit(args, args.op or "save", world, keep_as_ckpt(args.dir, folder), secs)
    dist.barrier()
    dist.destroy_process_group()


def main():
    args = parse()
    torch.set_num_threads(1)
    # A save or load without a process group warns that it assumes a single process: intended.
    warnings.filterwarnings("ignore", message=".*assuming the intent is to.*")
    if args.mode == "save-load":
        save_load(args)
    elif args.mode == "save-rank":
        save_rank(args)
    else:
        emit(args, args.op or "load", 1, args.dir, timed_loads(args, args.dir))


if __name__ == "__main__":
    main()
