"""The report of run_async_save_benchmark.sh: blocked time per save and step time during writes."""
import json
import re
import statistics
import sys
from pathlib import Path

out, rounds, title = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]


def steps(run):
    return [json.loads(line) for line in (out / run / "metrics.jsonl").read_text().splitlines() if line.strip()]


def floats(pattern, text):
    return [float(m) for m in re.findall(pattern, text)]


sync_blocked, async_blocked, written, during, floor, staged = [], [], [], [], [], []
wall = {"none": [], "sync": [], "async": []}
for r in range(1, rounds + 1):
    for mode in wall:
        wall[mode].append(steps(f"{mode}-{r}")[-1]["elapsed_s"])
    floor += [s["step_s"] for s in steps(f"none-{r}")[1:]]  # the first step warms up
    sync_blocked += floats(r"checkpoint saved: \S+ \(in ([0-9.]+) s\)", (out / f"sync-{r}.log").read_text())
    log = (out / f"async-{r}.log").read_text()
    blocked = floats(r"training blocked ([0-9.]+) s", log)
    async_blocked += blocked
    writes = floats(r"written in the background in ([0-9.]+) s", log)
    written += writes
    staged += floats(r"host buffers \([^,]+, ([0-9]+) bytes on this rank", log)
    # Steps that ran while a write did: after the saving step, until the write's duration had passed.
    records = steps(f"async-{r}")
    saving = [s for s in records if s["step"] % int(re.search(r"a save every (\d+)", title).group(1)) == 0]
    for save, write in zip(saving, writes):
        start = save["elapsed_s"]
        during += [s["step_s"] for s in records if s["step"] > save["step"] and s["elapsed_s"] - s["step_s"] < start + write]

med = statistics.median
print(f"## Asynchronous checkpoint saves: {title}, {rounds} round(s)\n")
print(f"State per rank copied to host buffers: {med(staged) / 2**30:.2f} GiB\n" if staged else "")
print("| | median | ratio to sync |")
print("|---|---|---|")
print(f"| training blocked per save, synchronous | {med(sync_blocked):.3f} s | 1.00 |")
print(f"| training blocked per save, asynchronous | {med(async_blocked):.3f} s | {med(async_blocked) / med(sync_blocked):.3f} |")
print(f"| background write per save | {med(written):.3f} s | {med(written) / med(sync_blocked):.2f} |")
if during:
    print(f"| step time while a write runs ({len(during)} steps) / without saves | {med(during):.4f} s / {med(floor):.4f} s | "
          f"{med(during) / med(floor):.2f}x slower |")
print(f"| whole run: none / sync / async | {med(wall['none']):.2f} / {med(wall['sync']):.2f} / {med(wall['async']):.2f} s | "
      f"async {med(wall['async']) / med(wall['sync']):.2f} of sync |")
