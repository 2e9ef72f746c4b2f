"""Turns the raw files run_ddp_benchmark.sh left in its results folder into one markdown report.

Usage: summarize_ddp.py RESULTS_DIR   (writes RESULTS_DIR/results.md and prints it)
Standard library only, so any python3 runs it.

Throughput is whole-cluster samples/s after the warm-up steps. shardkit: the metrics.jsonl records
after the first one (which covers the warm-up; --log_freq is WARMUP_STEPS), each record's
samples_per_s (already summed over ranks) weighted by the samples it covers, i.e. total samples
over total time. PyTorch: the peer's own JSON line, measured the same way. Ratios are taken per
round (the commands of one round ran back to back) and their median is reported. Failed runs
(non-zero exit) are left out and listed with the end of their logs; the exit status is then 1.
"""
import glob
import json
import os
import re
import statistics
import sys

# The readers and number formatting shared with the other benchmarks.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from summarize import fmt, read_json, read_jsonl  # noqa: E402




def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def shardkit_samples_per_s(run_dir, warmup, samples_per_step):
    """Whole-cluster samples/s over the records after the warm-up one; None if absent."""
    records = read_jsonl(os.path.join(run_dir, "metrics.jsonl"))
    samples = seconds = 0.0
    previous = None
    for r in records:
        if previous is not None and previous >= warmup and r["samples_per_s"] > 0:
            n = (r["step"] - previous) * samples_per_step
            samples += n
            seconds += n / r["samples_per_s"]
        previous = r["step"]
    return samples / seconds if seconds > 0 else None


def bucket_count(log_path):
    """The 'ddp: N buckets' start-up line of a preflight log (None if absent)."""
    if not os.path.exists(log_path):
        return None
    with open(log_path, errors="replace") as f:
        m = re.search(r"ddp: (\d+) buckets", f.read())
    return int(m.group(1)) if m else None


def collect(d, meta, failures):
    """{round: {name: {"sps": samples/s, "wall": s}}} from every round's successful runs; failed
    runs go to `failures` as (round tag, name, exit code)."""
    rounds = {}
    for path in sorted(glob.glob(os.path.join(d, "hyperfine.r*.json"))):
        tag = re.search(r"hyperfine\.(r\d+)\.json$", path).group(1)
        per = rounds.setdefault(tag, {})
        for r in read_json(path)["results"]:
            code = (r.get("exit_codes") or [0])[0]
            if code != 0:
                failures.append((tag, r["command"], code))
                continue
            entry = per.setdefault(r["command"], {})
            entry["wall"] = r["times"][0] if r["times"] else None
            entry["cpu"] = r["user"] + r["system"]  # the whole process tree, launcher included
        for name, entry in per.items():
            if name.startswith("sk-") and not name.endswith("-short"):
                world = 1 if name == "sk-1rank" else meta["nproc"]
                entry["sps"] = shardkit_samples_per_s(os.path.join(d, "runs", f"{name}.{tag}"),
                                                      meta["warmup_steps"], meta["batch_size"] * world)
        for rec in read_jsonl(os.path.join(d, f"python.{tag}.jsonl")):
            if rec["program"] in per:  # its run as a whole succeeded
                per[rec["program"]]["sps"] = rec["samples_per_s"]
                per[rec["program"]]["bucket_sizes"] = rec.get("bucket_sizes", "")
        measured = meta["steps"] - meta["warmup_steps"]
        for name in ("sk-ddp", "sk-1rank", "py-ddp"):
            full, short = per.get(name, {}).get("cpu"), per.get(name + "-short", {}).get("cpu")
            if full is not None and short is not None and full > short:
                world = 1 if name == "sk-1rank" else meta["nproc"]
                per[name]["cpu_sps"] = measured * meta["batch_size"] * world / (full - short)
    return rounds


def failures_section(d, failures, out):
    """Each failed timed run with its exit code and the end of its log."""
    out.append(f"## Failed runs ({len(failures)}; left out of every figure above)\n")
    for tag, name, code in failures:
        out.append(f"`{name}`, round {tag[1:]}: exit code {code}; last lines of logs/{name}.{tag}.log:\n")
        log = os.path.join(d, "logs", f"{name}.{tag}.log")
        lines = open(log, errors="replace").read().splitlines()[-15:] if os.path.exists(log) else ["(no log)"]
        out.append("```\n" + "\n".join(lines) + "\n```\n")


def paired_ratio(rounds, a, b, key="sps"):
    """Median over rounds of a/b, and the per-round values."""
    values = []
    for per in rounds.values():
        x, y = per.get(a, {}).get(key), per.get(b, {}).get(key)
        if x is not None and y:
            values.append(x / y)
    return median(values), values


def ratio_row(out, label, rounds, a, b, note, key="sps"):
    med, values = paired_ratio(rounds, a, b, key)
    if med is None:
        return
    spread = ", ".join(f"{v:.3f}" for v in values)
    out.append(f"| {label} | **{med:.3f}** | {spread} | {note} |")


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    d = sys.argv[1]
    meta = read_json(os.path.join(d, "meta.json")) or {}
    if not meta:
        raise SystemExit(f"{d}/meta.json is missing: not a run_ddp_benchmark.sh results folder")
    failures = []
    rounds = collect(d, meta, failures)
    names = [n for n in ("sk-ddp", "sk-ddp-no-overlap", "sk-ddp-smallbuckets", "sk-ddp-smallbuckets-no-overlap",
                         "sk-1rank", "py-ddp") if any(n in per for per in rounds.values())]
    nproc = meta["nproc"]

    out = ["# shardkit DDP throughput\n"]
    out.append(f"Machine: {meta.get('cpu', '?')}, {meta.get('cores', '?')} cores, no GPU used; "
               f"load average before: {meta.get('load_before', '?')}, after: {meta.get('load_after', '?')}. "
               f"LibTorch {meta.get('libtorch', '?')}, Python torch {meta.get('python_torch', '?')}, "
               f"hyperfine {meta.get('hyperfine', '?')}. Date {meta.get('date', '?')}.\n")
    out.append(f"mlp policy: hidden_dim={meta['hidden_dim']}, num_blocks={meta['num_blocks']}, "
               f"expansion={meta['expansion']}, state_dim={meta['state_dim']}, action_dim={meta['action_dim']}; "
               f"batch {meta['batch_size']} per process, {nproc} processes (sk-1rank: 1), one intra-op thread each; "
               f"{meta['steps']} steps, samples/s measured after the first {meta['warmup_steps']}; "
               f"AdamW lr 1e-3, weight decay 0.01, grad clip 10; {len(rounds)} interleaved rounds; "
               f"{'each rank pinned to its own CPUs (--cpu-bind=cores)' if meta.get('cpu_bind') else 'ranks not pinned'}.\n")

    buckets = {n: bucket_count(os.path.join(d, "preflight", f"{n}.log")) for n in names}
    out.append("| command | whole-cluster samples/s, median (min-max) | samples per CPU-second, median "
               "| whole-process wall time (s), mean ± σ | DDP buckets | runs |")
    out.append("|---|---|---|---|---|---|")
    for n in names:
        sps = [per[n].get("sps") for per in rounds.values() if n in per and per[n].get("sps") is not None]
        wall = [per[n].get("wall") for per in rounds.values() if n in per and per[n].get("wall") is not None]
        sps_txt = f"{median(sps):.1f} ({min(sps):.1f}-{max(sps):.1f})" if sps else "n/a"
        wall_txt = (f"{statistics.mean(wall):.2f} ± {statistics.stdev(wall) if len(wall) > 1 else 0:.2f}"
                    if wall else "n/a")
        if n == "py-ddp":
            sizes = next((per[n].get("bucket_sizes") for per in rounds.values() if per.get(n, {}).get("bucket_sizes")), "")
            bk = f"{len(sizes.split(','))} ({sizes} bytes)" if sizes else "n/a"
        else:
            bk = "n/a (single backend)" if n == "sk-1rank" else fmt(buckets[n], 0) if buckets[n] is not None else "n/a"
        cpu = median([per[n].get("cpu_sps") for per in rounds.values() if n in per])
        out.append(f"| {n} | {sps_txt} | {fmt(cpu, 1)} | {wall_txt} | {bk} | {len(sps)} |")
    out.append("")
    out.append(f"Samples per CPU-second: samples of the {meta['steps'] - meta['warmup_steps']} measured steps "
               "over (user+sys of a full run − user+sys of a "
               f"{meta['warmup_steps']}-step run of the same command, all processes of the run counted), per round.\n")

    out.append("| ratio | median of the rounds | per round | reading |")
    out.append("|---|---|---|---|")
    ratio_row(out, "shardkit DDP / PyTorch DDP", rounds, "sk-ddp", "py-ddp", ">1 = shardkit faster")
    ratio_row(out, "overlap on / off (25 MB buckets)", rounds, "sk-ddp", "sk-ddp-no-overlap", ">1 = overlap helps")
    ratio_row(out, f"overlap on / off ({meta.get('small_bucket_mb')} MB buckets)", rounds,
              "sk-ddp-smallbuckets", "sk-ddp-smallbuckets-no-overlap", ">1 = overlap helps")
    ratio_row(out, f"{meta.get('small_bucket_mb')} MB / 25 MB buckets (overlap on)", rounds,
              "sk-ddp-smallbuckets", "sk-ddp", ">1 = small buckets faster")
    med, values = paired_ratio(rounds, "sk-ddp", "sk-1rank")
    if med is not None:
        out.append(f"| scaling: {nproc} ranks / 1 rank (same batch per rank) | **{med:.3f}** "
                   f"| {', '.join(f'{v:.3f}' for v in values)} | ideal {nproc}; efficiency {med / nproc:.0%} "
                   f"on {meta.get('cores', '?')} cores |")
    ratio_row(out, "shardkit DDP / PyTorch DDP, per CPU-second", rounds, "sk-ddp", "py-ddp", ">1 = shardkit cheaper",
              key="cpu_sps")
    ratio_row(out, f"CPU cost of DDP: {nproc} ranks / 1 rank, per CPU-second", rounds, "sk-ddp", "sk-1rank",
              "1 = no CPU spent on communication", key="cpu_sps")
    med, values = paired_ratio(rounds, "sk-ddp", "py-ddp", key="wall")
    if med is not None:
        out.append(f"| whole-process wall time, shardkit / PyTorch | {med:.3f} "
                   f"| {', '.join(f'{v:.3f}' for v in values)} | <1 = shardkit faster (start-up included) |")
    out.append("")
    if failures:
        failures_section(d, failures, out)

    text = "\n".join(out) + "\n"
    with open(os.path.join(d, "results.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
