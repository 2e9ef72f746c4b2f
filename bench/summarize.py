"""Turns the raw files run_benchmarks.sh left in its results folder into one markdown report.

Usage: summarize.py RESULTS_DIR   (writes RESULTS_DIR/results.md and prints it)
Standard library only, so any python3 runs it.
"""
import glob
import json
import os
import statistics
import sys


def read_jsonl(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_json(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def fmt(x, digits=3):
    return "n/a" if x is None else f"{x:.{digits}f}"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def shardkit_steps_per_s(run_dir, warmup):
    """Steps/s after the first `warmup` steps, from the elapsed_s of metrics.jsonl records."""
    records = read_jsonl(os.path.join(run_dir, "metrics.jsonl"))
    first = next((r for r in records if r["step"] == warmup), None)
    if first is None or records[-1]["step"] <= warmup:
        return None
    last = records[-1]
    return (last["step"] - first["step"]) / (last["elapsed_s"] - first["elapsed_s"])


def merge_rounds(rounds):
    """Per command: mean and σ of the wall times, and mean user/system, over every round's runs."""
    runs = {}
    for hf in rounds:
        for r in hf["results"]:
            acc = runs.setdefault(r["command"], {"times": [], "user": [], "system": []})
            acc["times"] += r["times"]
            acc["user"] += [r["user"]] * len(r["times"])
            acc["system"] += [r["system"]] * len(r["times"])
    return {name: {"mean": statistics.mean(a["times"]),
                   "stddev": statistics.stdev(a["times"]) if len(a["times"]) > 1 else 0.0,
                   "user": statistics.mean(a["user"]), "system": statistics.mean(a["system"]),
                   "runs": len(a["times"])}
            for name, a in runs.items()}


def training_section(d, meta, out):
    rounds = [read_json(p) for p in sorted(glob.glob(os.path.join(d, "train_hyperfine.*.json")))]
    if not rounds:
        return
    wall = merge_rounds(rounds)
    inproc = {"shardkit": [], "libtorch": [], "python": []}
    for run_dir in sorted(glob.glob(os.path.join(d, "train_runs", "sk.*"))):
        sps = shardkit_steps_per_s(run_dir, meta["warmup_steps"])
        if sps is not None:
            inproc["shardkit"].append(sps)
    for rec in read_jsonl(os.path.join(d, "train_peers.jsonl")):
        inproc[rec["program"]].append(rec["steps_per_s"])
    med = {k: statistics.median(v) if v else None for k, v in inproc.items()}
    best = {k: max(v) if v else None for k, v in inproc.items()}

    out.append("## 1. Trainer overhead (one intra-op thread)\n")
    out.append(f"mlp policy: hidden_dim={meta['hidden_dim']}, num_blocks={meta['num_blocks']}, "
               f"expansion={meta['expansion']}, batch_size={meta['batch_size']}, "
               f"state_dim={meta['state_dim']}, action_dim={meta['action_dim']}; "
               f"{meta['steps']} steps, steps/s measured after the first {meta['warmup_steps']}; "
               f"AdamW lr 1e-3, weight decay 0.01, grad clip 10.\n")
    measured = meta["steps"] - meta["warmup_steps"]
    cpu = {}
    for name in inproc:
        full, short = wall.get(name), wall.get(name + "-short")
        if full and short:
            spent = (full["user"] + full["system"]) - (short["user"] + short["system"])
            cpu[name] = measured / spent if spent > 0 else None
    out.append("| program | wall time per process (s), mean ± σ | in-process steps/s, median (best) "
               "| steps per CPU-second | runs |")
    out.append("|---|---|---|---|---|")
    for name in ("shardkit", "libtorch", "python"):
        w = wall.get(name)
        wall_txt = f"{w['mean']:.2f} ± {w['stddev'] or 0:.2f}" if w else "n/a"
        out.append(f"| {name} | {wall_txt} | {fmt(med[name], 2)} ({fmt(best[name], 2)}) "
                   f"| {fmt(cpu.get(name), 2)} | {len(inproc[name])} |")
    out.append("")
    out.append("Steps per CPU-second: (user+sys of a full run − user+sys of a "
               f"{meta['warmup_steps']}-step run, hyperfine means) over the {measured} steps between them.\n")
    out.append("| ratio | in-process steps/s (median) | steps per CPU-second | whole-process wall time (mean) |")
    out.append("|---|---|---|---|")
    for peer in ("libtorch", "python"):
        sw, pw = wall.get("shardkit"), wall.get(peer)
        wall_ratio = ratio(sw["mean"], pw["mean"]) if sw and pw else None
        out.append(f"| shardkit / {peer} | {fmt(ratio(med['shardkit'], med[peer]))} (>1 = shardkit faster) "
                   f"| {fmt(ratio(cpu.get('shardkit'), cpu.get(peer)))} (>1 = shardkit faster) "
                   f"| {fmt(wall_ratio)} (<1 = shardkit faster) |")
    out.append("")


def gbps(rec):
    secs = rec["seconds"]
    return rec["bytes"] / statistics.median(secs) / 1e9, rec["bytes"] / min(secs) / 1e9


def safetensors_section(d, out):
    recs = read_jsonl(os.path.join(d, "safetensors.jsonl"))
    if not recs:
        return
    by = {(r["program"], r["op"]): r for r in recs}
    size = recs[0]["bytes"]
    out.append("## 2. safetensors save / load\n")
    out.append(f"State dict of {size / 1e9:.3f} GB (64 float32 tensors of 4M elements plus bf16, f16, "
               "i64, i8, bool, scalar and empty tensors); files in the page cache (it is not dropped).\n")
    out.append("| operation | shardkit: median s, GB/s (best GB/s) | Python safetensors: median s, GB/s (best GB/s) "
               "| speed ratio shardkit / Python |")
    out.append("|---|---|---|---|")
    rows = [("save (shardkit fsyncs; Python save_file + os.fsync)", "save", "save_fsync"),
            ("save (shardkit fsyncs; Python save_file without fsync)", "save", "save"),
            ("load, owned copies (File::open + to_tensor / load_file + clone)", "load", "load_clone"),
            ("load, owned copies (File::open + to_tensor / load_file(backend=\"pread\"))", "load", "load_pread"),
            ("open, lazy (File::open + get views / load_file, default mmap)", "open", "load")]
    for label, sk_op, py_op in rows:
        sk, py = by.get(("shardkit", sk_op)), by.get(("python", py_op))
        sk_m, sk_b = gbps(sk) if sk else (None, None)
        py_m, py_b = gbps(py) if py else (None, None)
        sk_s = statistics.median(sk["seconds"]) if sk else None
        py_s = statistics.median(py["seconds"]) if py else None
        out.append(f"| {label} | {fmt(sk_s, 4)} s, {fmt(sk_m, 2)} ({fmt(sk_b, 2)}) "
                   f"| {fmt(py_s, 4)} s, {fmt(py_m, 2)} ({fmt(py_b, 2)}) | {fmt(ratio(sk_m, py_m), 2)} |")
    identical = os.path.join(d, "safetensors_identical.txt")
    if os.path.exists(identical):
        with open(identical) as f:
            out.append(f"\nshardkit's file and the reference's file of the same tensors: {f.read().strip()}.")
    out.append("")


def startup_section(d, out):
    hf = read_json(os.path.join(d, "startup_hyperfine.json"))
    probe = read_jsonl(os.path.join(d, "startup_probe.jsonl"))
    if hf is None and not probe:
        return
    out.append("## 3. Start-up\n")
    if hf:
        out.append("| command | wall time (s), mean ± σ | min | max |")
        out.append("|---|---|---|---|")
        for r in hf["results"]:
            out.append(f"| `{r['command']}` | {r['mean']:.3f} ± {r['stddev'] or 0:.3f} | {r['min']:.3f} | {r['max']:.3f} |")
        out.append("")
    if probe:
        first = statistics.median(p["first_line_s"] for p in probe)
        step = [p["match_s"] for p in probe if p["match_s"] is not None]
        out.append(f"`shardkit-train --steps=1` (default mlp, {len(probe)} runs, median): first log line after "
                   f"{first:.3f} s, the step-1 progress line (first training step done) after "
                   f"{fmt(statistics.median(step) if step else None)} s.\n")


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    d = sys.argv[1]
    meta = read_json(os.path.join(d, "meta.json")) or {}
    out = ["# shardkit benchmark results\n"]
    out.append(f"Machine: {meta.get('cpu', '?')}, {meta.get('cores', '?')} cores, no GPU used; "
               f"load average before: {meta.get('load_before', '?')}, after: {meta.get('load_after', '?')}. "
               f"LibTorch {meta.get('libtorch', '?')}, Python torch {meta.get('python_torch', '?')}, "
               f"safetensors {meta.get('safetensors', '?')}, hyperfine {meta.get('hyperfine', '?')}. "
               f"Date {meta.get('date', '?')}.\n")
    if meta:
        training_section(d, meta, out)
    safetensors_section(d, out)
    startup_section(d, out)
    text = "\n".join(out) + "\n"
    with open(os.path.join(d, "results.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
