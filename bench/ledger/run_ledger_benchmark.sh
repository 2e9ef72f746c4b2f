#!/usr/bin/env bash
# Collective-ledger overhead: the same fsdp (or ddp) run with the ledger on (default), with the
# ledger but without the per-step comparison, and with the ledger off; prints a markdown table of
# the mean time per step after warm-up (metrics.jsonl's update_s, which excludes start-up and
# data loading) and its ratio to the ledger-off run.
#
# Usage: bench/ledger/run_ledger_benchmark.sh [BUILD_DIR]     (default: build)
# Knobs: RUNS (5 interleaved rounds, the order rotating), STEPS (60), WARMUP_STEPS (10),
# BACKEND (fsdp), HIDDEN_DIM (512), NUM_BLOCKS (8), BATCH_SIZE (32), NPROC (2), RESULTS_DIR.
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-build}"
[[ "$BUILD" = /* ]] || BUILD="$SRC/$BUILD"
RUNS="${RUNS:-5}" STEPS="${STEPS:-60}" WARMUP_STEPS="${WARMUP_STEPS:-10}" BACKEND="${BACKEND:-fsdp}"
HIDDEN_DIM="${HIDDEN_DIM:-512}" NUM_BLOCKS="${NUM_BLOCKS:-8}" BATCH_SIZE="${BATCH_SIZE:-32}" NPROC="${NPROC:-2}"
BIN="$BUILD/bin"
for exe in shardkit-train shardkit-run; do
  [[ -x "$BIN/$exe" ]] || { echo "run_ledger_benchmark.sh: $BIN/$exe is missing; build the tree" >&2; exit 1; }
done
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
OUT="${RESULTS_DIR:-$BUILD/bench-results/ledger-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT"

declare -A FLAGS=([ledger]="" [ledger-nocheck]="--distributed.check_collectives=false"
                  [no-ledger]="--distributed.collective_ledger=false")
NAMES=(ledger ledger-nocheck no-ledger)
for ((round = 0; round < RUNS; round++)); do
  for ((i = 0; i < ${#NAMES[@]}; i++)); do
    name="${NAMES[(i + round) % ${#NAMES[@]}]}"
    dir="$OUT/$name.$round"
    "$BIN/shardkit-run" --master-port=0 --nproc-per-node="$NPROC" "$BIN/shardkit-train" --policy.type=mlp \
      --policy.hidden_dim="$HIDDEN_DIM" --policy.num_blocks="$NUM_BLOCKS" --batch_size="$BATCH_SIZE" \
      --distributed_backend="$BACKEND" --save_checkpoint=false --num_threads=1 --log_freq=1 \
      --steps="$STEPS" --output_dir="$dir" ${FLAGS[$name]} > "$dir.log" 2>&1 ||
      { echo "run $name.$round failed; see $dir.log" >&2; exit 1; }
    echo "round $round: $name done" >&2
  done
done

python3 - "$OUT" "$WARMUP_STEPS" "$BACKEND" "$NPROC" <<'PY'
import json, statistics, sys, pathlib
out, warmup, backend, nproc = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
per = {}
for metrics in sorted(out.glob("*/metrics.jsonl")):
    name = metrics.parent.name.rsplit(".", 1)[0]
    steps = [json.loads(l) for l in metrics.read_text().splitlines() if l.strip()]
    per.setdefault(name, []).append(statistics.mean(s["update_s"] for s in steps if s["step"] > warmup))
base = statistics.median(per["no-ledger"])
print(f"| {backend}, {nproc} ranks | median s/step | x no-ledger | runs |")
print("|---|---|---|---|")
for name in ("ledger", "ledger-nocheck", "no-ledger"):
    m = statistics.median(per[name])
    print(f"| {name} | {m:.5f} | {m / base:.3f} | {len(per[name])} |")
PY
