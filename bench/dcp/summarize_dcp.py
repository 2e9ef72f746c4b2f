"""Turns the JSON lines run_dcp_benchmark.sh left in its results folder into one markdown report.

Usage: summarize_dcp.py RESULTS_DIR   (writes RESULTS_DIR/results.md and prints it)
Standard library only, so any python3 runs it.

Each JSON line holds the seconds of REPS repetitions of one operation in one round; a round's
figure is their median. Throughput is the tensors' bytes (not the files', which add pickle
headers and metadata) over that time. Ratios are taken per round (both sides ran back to back)
and their median is reported; the table shows the medians over rounds of each figure.
"""
import glob
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from summarize import fmt, read_json, read_jsonl  # noqa: E402

OPS = [  # (op, what it is)
    ("save", "save, 1 process"),
    ("load", "load, 1 process, into preallocated tensors"),
    ("save_ranks", "save, {n} processes (each its dim-0 slice)"),
    ("reshard_load", "reshard {n} -> 1: load of the {n}-rank folder, 1 process"),
    ("read_cat", "floor: read() the 1-process folder's files, 1 MiB buffer (`cat`)"),
    ("read_into", "floor: pread the files into one buffer of their size"),
]


def collect(d):
    """{round: {(program, op): median seconds}} and {(program, op): bytes}."""
    rounds, sizes = {}, {}
    for path in sorted(glob.glob(os.path.join(d, "raw", "r*.jsonl"))):
        tag = int(re.search(r"r(\d+)\.jsonl$", path).group(1))
        for rec in read_jsonl(path):
            key = (rec["program"], rec["op"])
            rounds.setdefault(tag, {})[key] = statistics.median(rec["seconds"])
            sizes[key] = (rec["bytes"], rec["file_bytes"])
    return rounds, sizes


def per_round(rounds, a, b):
    """Per round: a's seconds over b's, i.e. b's speed over a's (> 1: b is faster)."""
    out = []
    for tag in sorted(rounds):
        r = rounds[tag]
        if a in r and b in r and r[b] > 0:
            out.append(r[a] / r[b])
    return out


def main():
    d = sys.argv[1]
    meta = read_json(os.path.join(d, "meta.json")) or {}
    rounds, sizes = collect(d)
    n = meta.get("nproc", 2)
    lines = [f"# DCP checkpoint I/O: shardkit vs PyTorch {meta.get('python_torch', '?')} torch.distributed.checkpoint", ""]
    lines.append(f"- {meta.get('size_mb')} MiB of float32 in {meta.get('num_tensors')} tensors; "
                 f"{meta.get('rounds')} rounds (order alternating), median of {meta.get('reps')} repetitions per round")
    lines.append(f"- {meta.get('cpu', '?')}, {meta.get('cores', '?')} cores; checkpoints on {meta.get('ckpt_fs', '?')}; "
                 f"page cache not dropped; load average {meta.get('load_before', '?')} before, {meta.get('load_after', '?')} after")
    lines.append(f"- {meta.get('date', '?')}")
    lines += ["", "| operation | shardkit s (GB/s) | PyTorch s (GB/s) | shardkit / PyTorch speed, median (per round) |",
              "|---|---|---|---|"]
    med = {}
    for key in {k for r in rounds.values() for k in r}:
        med[key] = statistics.median([r[key] for r in rounds.values() if key in r])

    def cell(program, op):
        if (program, op) not in med:
            return "-"
        s = med[(program, op)]
        return f"{s:.3f} ({sizes[(program, op)][0] / s / 1e9:.2f})"

    ratios = {}
    for op, what in OPS:
        rr = per_round(rounds, ("pytorch", op), ("shardkit", op))
        ratios[op] = statistics.median(rr) if rr else None
        rtext = f"**{fmt(ratios[op], 2)}** ({', '.join(f'{x:.2f}' for x in rr)})" if rr else "-"
        lines.append(f"| {what.format(n=n)} | {cell('shardkit', op)} | {cell('pytorch', op)} | {rtext} |")

    floor_cat = per_round(rounds, ("shardkit", "read_cat"), ("shardkit", "load"))
    floor_into = per_round(rounds, ("shardkit", "read_into"), ("shardkit", "load"))
    py_cat = per_round(rounds, ("shardkit", "read_cat"), ("pytorch", "load"))
    files = {k: sizes.get(k, (0, 0))[1] for k in [("shardkit", "save"), ("pytorch", "save"),
                                                 ("shardkit", "save_ranks"), ("pytorch", "save_ranks")]}
    lines += ["", f"Folder sizes in bytes (tensor data, pickle records, `.metadata`): 1 process shardkit "
              f"{files[('shardkit', 'save')]}, PyTorch {files[('pytorch', 'save')]}; {n} processes shardkit "
              f"{files[('shardkit', 'save_ranks')]}, PyTorch {files[('pytorch', 'save_ranks')]}.", "",
              "| target | measured, median (per round) | met |", "|---|---|---|"]

    def target(what, values, goal):
        if not values:
            lines.append(f"| {what} | n/a | - |")
            return
        m = statistics.median(values)
        met = "-" if goal is None else "yes" if m >= goal else "no"
        lines.append(f"| {what} | **{m:.3f}** ({', '.join(f'{x:.2f}' for x in values)}) | {met} |")

    target("save speed, shardkit / PyTorch >= 1", per_round(rounds, ("pytorch", "save"), ("shardkit", "save")), 1.0)
    target("load speed, shardkit / PyTorch >= 1", per_round(rounds, ("pytorch", "load"), ("shardkit", "load")), 1.0)
    target(f"save of {n} ranks, shardkit / PyTorch >= 1",
           per_round(rounds, ("pytorch", "save_ranks"), ("shardkit", "save_ranks")), 1.0)
    target(f"reshard {n} -> 1 load, shardkit / PyTorch >= 1",
           per_round(rounds, ("pytorch", "reshard_load"), ("shardkit", "reshard_load")), 1.0)
    target("shardkit load / `cat` read of the same files >= 0.5", floor_cat, 0.5)
    target("shardkit load / pread into a buffer of the same size >= 0.5", floor_into, 0.5)
    target("(context, no target) PyTorch load / `cat` read", py_cat, None)

    interop = read_jsonl(os.path.join(d, "raw", "interop.jsonl"))
    lines += ["", "Interop (each load compared element for element with the saved values; a mismatch stops the run):", ""]
    for rec in interop:
        lines.append(f"- {rec['op']} ({rec['program']} loads): equal, {rec['seconds'][0]:.3f} s")
    if not interop:
        lines.append("- not run")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(d, "results.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
