#!/usr/bin/env bash
# shardkit's lerobot loader against LeRobot's DataLoader on one dataset: 0/1/2 workers, batch 8, ACT's chunk of
# 100 actions, each configuration run REPEATS times alternately; prints the medians and their ratio.
# Usage: bench/lerobot/run_lerobot_benchmark.sh <dataset root> <python of a lerobot 0.6.1 venv> [build dir]
# (the lerobot venv: see STACK-FACTS "LeRobot"; a larger dataset: bench/lerobot/make_bench_dataset.py in that venv)
# AUGMENT=1: both sides with LeRobot's default image transforms on (--dataset.image_transforms.enable=true).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$1; PEER=$2; BUILD=${3:-build}; REPEATS=${REPEATS:-3}; BATCHES=${BATCHES:-100}; AUGMENT=${AUGMENT:-0}
ninja -C "$BUILD" bench_lerobot_loader >/dev/null
for w in 0 1 2; do
  ours=(); theirs=()
  for _ in $(seq "$REPEATS"); do
    ours+=("$("$BUILD/bin/bench_lerobot_loader" "$ROOT" "$w" "$BATCHES" 100 0 "$AUGMENT" 2>/dev/null | tail -1)")
    theirs+=("$("$PEER" bench/lerobot/lerobot_loader.py "$ROOT" "$w" "$BATCHES" 100 "$AUGMENT" 2>/dev/null | tail -1)")
  done
  python3 - "$w" "${#ours[@]}" "${ours[@]}" "${theirs[@]}" <<'PY'
import json, statistics, sys
w, n = sys.argv[1], int(sys.argv[2])
ours = [json.loads(x)["frames_per_s"] for x in sys.argv[3:3 + n]]
theirs = [json.loads(x)["frames_per_s"] for x in sys.argv[3 + n:]]
a, b = statistics.median(ours), statistics.median(theirs)
print(f"workers {w}: shardkit {a:.0f} frames/s (runs {ours}), lerobot {b:.0f} (runs {theirs}), ratio {a / b:.2f}")
PY
done
