"""Turns the raw files run_fsdp_benchmark.sh left in its results folder into one markdown report.

Usage: summarize_fsdp.py RESULTS_DIR   (writes RESULTS_DIR/results.md and prints it)

Throughput: whole-cluster samples/s after the warm-up (shardkit: metrics.jsonl, PyTorch: the peer's
JSON line), ratios per round, median reported. Memory: each rank's peak from the memory runs and the
ratio of the largest ranks; ZeRO's per-rank model-state bytes from DeepSpeed's formulas with fp32
Adam (parameters 4P, gradients 4P, optimizer state 8P; stage 1 partitions the optimizer state,
stage 2 also the gradients, stage 3 also the parameters), P counted from the mlp policy's shapes.
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ddp"))
from summarize import read_json, read_jsonl  # noqa: E402
from summarize_ddp import median, paired_ratio, ratio_row, shardkit_samples_per_s  # noqa: E402

PEAK = re.compile(r"peak CPU tensor memory while training: .*?\((\d+) bytes\) on rank (\d+)")


def param_count(m):
    s, d, e, a = m["state_dim"], m["hidden_dim"], m["expansion"], m["action_dim"]
    block = 2 * d + d * d * e + d * e + d * e * d + d
    return s * d + d + m["num_blocks"] * block + d * a + a


def zero_formula(stage, p, n):
    return {1: 4 * p + 4 * p + 8 * p / n, 2: 4 * p + 12 * p / n, 3: 16 * p / n}[stage]


def peaks(d, name):
    """Per-rank peak bytes of a memory run, rank order."""
    path = os.path.join(d, "memory", f"{name}.log")
    if not os.path.exists(path):
        return None
    text = open(path, errors="replace").read()
    if name.startswith("py-"):
        for line in text.splitlines():
            if line.startswith("{") and '"peak_bytes_per_rank"' in line:
                return json.loads(line)["peak_bytes_per_rank"]
        return None
    found = {int(r): int(b) for b, r in PEAK.findall(text)}
    return [found[r] for r in sorted(found)] or None


def mb(x):
    return f"{x / 1e6:.1f} MB"


def main():
    d = sys.argv[1]
    meta = read_json(os.path.join(d, "meta.json"))
    n = meta["nproc"]
    rounds, failures = {}, []
    for path in sorted(glob.glob(os.path.join(d, "hyperfine.r*.json"))):
        tag = re.search(r"hyperfine\.(r\d+)\.json$", path).group(1)
        per = rounds.setdefault(tag, {})
        for r in read_json(path)["results"]:
            if (r.get("exit_codes") or [0])[0] != 0:
                failures.append((tag, r["command"]))
                continue
            name = r["command"]
            per[name] = {"wall": r["times"][0]}
            if name.startswith("sk-"):
                per[name]["sps"] = shardkit_samples_per_s(os.path.join(d, "runs", f"{name}.{tag}"),
                                                          meta["warmup_steps"], meta["batch_size"] * n)
        for rec in read_jsonl(os.path.join(d, f"python.{tag}.jsonl")):
            if rec["program"] in per:
                per[rec["program"]]["sps"] = rec["samples_per_s"]

    out = ["# shardkit sharded backends: throughput and memory\n"]
    out.append(f"Machine: {meta['cpu']}, {meta['cores']} cores; load before {meta['load_before']}, after "
               f"{meta.get('load_after', '?')}; Python torch {meta['python_torch']}; {meta['date']}.\n")
    p = param_count(meta)
    out.append(f"mlp: hidden_dim={meta['hidden_dim']}, num_blocks={meta['num_blocks']}, expansion="
               f"{meta['expansion']} ({p} parameters, {mb(4 * p)} fp32); batch {meta['batch_size']} per rank, "
               f"{n} ranks, one thread each; {meta['steps']} steps, samples/s after {meta['warmup_steps']}; "
               f"{len(rounds)} interleaved rounds; memory runs of {meta['mem_steps']} steps.\n")
    out.append("| command | whole-cluster samples/s, median (min-max) | runs |")
    out.append("|---|---|---|")
    for name in ("sk-fsdp", "sk-fsdp-noprefetch", "sk-zero3", "sk-ddp", "py-fsdp2"):
        v = [per[name]["sps"] for per in rounds.values() if per.get(name, {}).get("sps")]
        txt = f"{median(v):.1f} ({min(v):.1f}-{max(v):.1f})" if v else "n/a"
        out.append(f"| {name} | {txt} | {len(v)} |")
    out.append("")
    out.append("| ratio | median of the rounds | per round | reading |")
    out.append("|---|---|---|---|")
    ratio_row(out, "shardkit fsdp / PyTorch FSDP2", rounds, "sk-fsdp", "py-fsdp2", "target >= 1.0")
    ratio_row(out, "shardkit zero3 / PyTorch FSDP2", rounds, "sk-zero3", "py-fsdp2", ">1 = zero3 faster")
    ratio_row(out, "shardkit fsdp / shardkit ddp", rounds, "sk-fsdp", "sk-ddp", "<1 = sharding costs time")
    ratio_row(out, "fsdp prefetch on / off", rounds, "sk-fsdp", "sk-fsdp-noprefetch", ">1 = prefetch helps")
    out.append("")

    mem = {name: peaks(d, name) for name in ("sk-fsdp", "sk-zero1", "sk-zero2", "sk-zero1-h2", "sk-zero2-h2",
                                             "sk-zero3", "sk-ddp", "py-fsdp2")}
    out.append("| memory run | peak tensor bytes per rank | largest rank / PyTorch FSDP2's largest | "
               "DeepSpeed formula (model states only) | measured / formula |")
    out.append("|---|---|---|---|---|")
    py = max(mem["py-fsdp2"]) if mem["py-fsdp2"] else None
    for name, v in mem.items():
        if not v:
            out.append(f"| {name} | n/a | | | |")
            continue
        ratio = f"**{max(v) / py:.3f}**" if py else "n/a"
        stage = int(name[len("sk-zero")]) if name.startswith("sk-zero") else 3 if name == "sk-fsdp" else None
        formula = zero_formula(stage, p, n) if stage else 16 * p if name == "sk-ddp" else None
        ftxt = mb(formula) + (f" (stage {stage})" if stage else " (unsharded)") if formula else ""
        rtxt = f"{max(v) / formula:.2f}" if formula else ""
        out.append(f"| {name} | {', '.join(mb(x) for x in v)} | {ratio} | {ftxt} | {rtxt} |")
    out.append("")
    if failures:
        out.append(f"Failed runs (left out): {failures}\n")
    text = "\n".join(out) + "\n"
    open(os.path.join(d, "results.md"), "w").write(text)
    sys.stdout.write(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
