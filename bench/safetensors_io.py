"""safetensors save/load throughput of the Python reference (safetensors.torch) on the state dict
that bench_safetensors_io wrote, so both sides handle the same tensors.

save       = safetensors.torch.save_file (no fsync: the reference does not call one)
save_fsync = save_file followed by os.fsync of the file, the durability shardkit's write_file gives
load       = safetensors.torch.load_file, default backend: tensors on a private mmap of the file,
             no byte read yet (compare with shardkit's File::open + get(), "open")
load_clone = load_file + clone() of every tensor: owned copies, as shardkit's to_tensor gives
load_pread = load_file(backend="pread"): owned tensors read with pread(2), when this version has it

Needs a Python with both PyTorch and safetensors: the venv scripts/setup.sh makes.
Prints one JSON line per operation: {"program":"python","op":"save","bytes":N,"seconds":[...]}
"""
import argparse
import json
import os
import time

import safetensors
from safetensors.torch import load_file, save_file


def timed(fn, reps):
    out = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--source", required=True, help="file written by bench_safetensors_io")
    p.add_argument("--file", required=True, help="where to write the Python copy")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--out", default="", help="append the JSON lines to this file too")
    p.add_argument("--save_only", action="store_true", help="measure save_fsync alone")
    a = p.parse_args()

    tensors = load_file(a.source)

    def save():
        save_file(tensors, a.file)

    def save_fsync():
        save_file(tensors, a.file)
        fd = os.open(a.file, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    results = {"save_fsync": timed(save_fsync, a.reps)}
    if a.save_only:
        emit(results, os.path.getsize(a.file), a.out)
        return
    results["save"] = timed(save, a.reps)
    os.sync()  # flush the unsynced saves so their write-back does not overlap the loads
    loaded = {}

    def load():
        loaded.clear()
        loaded.update(load_file(a.file))

    def load_clone():
        loaded.clear()
        loaded.update({k: v.clone() for k, v in load_file(a.file).items()})

    def load_pread():
        loaded.clear()
        loaded.update(load_file(a.file, backend="pread"))

    results["load"] = timed(load, a.reps)
    results["load_clone"] = timed(load_clone, a.reps)
    try:
        load_file(a.file, backend="pread")
        results["load_pread"] = timed(load_pread, a.reps)
    except TypeError:  # safetensors before the backend argument
        pass
    if len(loaded) != len(tensors):
        raise SystemExit(f"loaded {len(loaded)} tensors, expected {len(tensors)}")

    emit(results, os.path.getsize(a.file), a.out)


def emit(results, size, out):
    lines = [json.dumps({"program": "python", "op": op, "bytes": size, "seconds": secs,
                         "safetensors": safetensors.__version__}) for op, secs in results.items()]
    print("\n".join(lines), flush=True)
    if out:
        with open(out, "a") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
