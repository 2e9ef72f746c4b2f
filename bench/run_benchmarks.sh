#!/usr/bin/env bash
# Builds and runs shardkit's benchmarks side by side with their peers; prints a markdown report.
#
# Usage: bench/run_benchmarks.sh [BUILD_DIR]      (default: build, relative to the source tree)
#
# Builds shardkit-train, every built-in plugin and the two bench programs (target
# shardkit_bench; SHARDKIT_BUILD_BENCH is switched on in BUILD_DIR) and then runs:
#   1. trainer overhead: shardkit-train vs a plain LibTorch loop vs Python PyTorch, same model;
#   2. safetensors save/load of a ~1 GB state dict: shardkit vs Python safetensors.torch;
#   3. start-up: shardkit-train --help and --steps=1, time to the first log line and first step.
# Raw results and results.md go to BUILD_DIR/bench-results/<date-time>/; results.md is
# also printed. Takes about 5-10 minutes on 2 cores.
#
# Needs: a build set up by scripts/setup.sh (its venv's Python, TORCH_PYTHON by default, has
# PyTorch 2.15.0 and safetensors: the same LibTorch kernels on both sides) and hyperfine.
# Knobs (environment): RUNS (interleaved rounds of one run per command, default 5), STEPS (default 60),
# WARMUP_STEPS (default 10), HIDDEN_DIM (256), NUM_BLOCKS (2), EXPANSION (2), BATCH_SIZE (64),
# ST_REPS (safetensors repetitions, default 3), JOBS (build parallelism, default 2),
# BENCH_TMPDIR (where the 1 GB files go, default $TMPDIR or /tmp).
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-build}"
[[ "$BUILD" = /* ]] || BUILD="$SRC/$BUILD"
RUNS="${RUNS:-5}"
STEPS="${STEPS:-60}"
WARMUP_STEPS="${WARMUP_STEPS:-10}"
HIDDEN_DIM="${HIDDEN_DIM:-256}"
NUM_BLOCKS="${NUM_BLOCKS:-2}"
EXPANSION="${EXPANSION:-2}"
BATCH_SIZE="${BATCH_SIZE:-64}"
STATE_DIM=16
ACTION_DIM=4
ST_REPS="${ST_REPS:-3}"
JOBS="${JOBS:-2}"
TORCH_PYTHON="${TORCH_PYTHON:-${SHARDKIT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkit/venv-torch-2.15.0}/bin/python}"

die() { echo "run_benchmarks.sh: $*" >&2; exit 1; }
command -v hyperfine >/dev/null || die "hyperfine is not installed (apt-get install hyperfine)"
"$TORCH_PYTHON" -c 'import torch' 2>/dev/null ||
  die "$TORCH_PYTHON cannot import torch; set TORCH_PYTHON to a Python with PyTorch (scripts/setup.sh makes the venv with torch 2.15.0)"
HAVE_SAFETENSORS=1
"$TORCH_PYTHON" -c 'import safetensors.torch' 2>/dev/null || HAVE_SAFETENSORS=0

# --- build -------------------------------------------------------------------------------
# Configured (against the venv's LibTorch 2.15) and built by the set-up script.
[[ -f "$BUILD/CMakeCache.txt" ]] || SHARDKIT_BUILD_TARGETS=shardkit_bench "$SRC/scripts/setup.sh" "$BUILD" >&2
if ! grep -q '^SHARDKIT_BUILD_BENCH:BOOL=ON' "$BUILD/CMakeCache.txt"; then
  cmake -S "$SRC" -B "$BUILD" -DSHARDKIT_BUILD_BENCH=ON >&2
fi
cmake --build "$BUILD" --target shardkit_bench -j"$JOBS" >&2
BIN="$BUILD/bin"

# One intra-op thread everywhere, whichever BLAS/OpenMP LibTorch was built with.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

OUT="$BUILD/bench-results/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT/train_runs"
TMP="$(mktemp -d "${BENCH_TMPDIR:-${TMPDIR:-/tmp}}/shardkit-bench.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

LIBTORCH_VERSION="$("$BIN/shardkit-env" 2>/dev/null | sed -n 's/^LibTorch \([0-9.]*\).*/\1/p' | head -1)"
cat > "$OUT/meta.json" <<EOF
{"cpu": "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)",
 "cores": $(getconf _NPROCESSORS_ONLN), "load_before": "$(cut -d' ' -f1-3 /proc/loadavg)",
 "libtorch": "${LIBTORCH_VERSION:-?}",
 "python_torch": "$("$TORCH_PYTHON" -c 'import torch; print(torch.__version__)')",
 "safetensors": "$("$TORCH_PYTHON" -c 'import safetensors; print(safetensors.__version__)' 2>/dev/null || echo none)",
 "hyperfine": "$(hyperfine --version | cut -d' ' -f2)", "date": "$(date -u +%Y-%m-%dT%H:%MZ)",
 "steps": $STEPS, "warmup_steps": $WARMUP_STEPS, "hidden_dim": $HIDDEN_DIM,
 "num_blocks": $NUM_BLOCKS, "expansion": $EXPANSION, "batch_size": $BATCH_SIZE,
 "state_dim": $STATE_DIM, "action_dim": $ACTION_DIM}
EOF

# --- 1. trainer overhead -----------------------------------------------------------------
echo "== 1. trainer overhead: shardkit-train vs LibTorch vs Python" >&2
MODEL="--hidden_dim=$HIDDEN_DIM --num_blocks=$NUM_BLOCKS --expansion=$EXPANSION --batch_size=$BATCH_SIZE"
MODEL="$MODEL --state_dim=$STATE_DIM --action_dim=$ACTION_DIM --num_threads=1"
SK_MODEL="'$BIN/shardkit-train' --policy.type=mlp --policy.hidden_dim=$HIDDEN_DIM"
SK_MODEL="$SK_MODEL --policy.num_blocks=$NUM_BLOCKS --policy.expansion=$EXPANSION --batch_size=$BATCH_SIZE"
SK_MODEL="$SK_MODEL --dataset.state_dim=$STATE_DIM --dataset.action_dim=$ACTION_DIM"
SK_MODEL="$SK_MODEL --save_checkpoint=false --num_threads=1 --log_freq=$WARMUP_STEPS"
# Full runs (STEPS steps) give the wall times and the in-process steps/s after warm-up:
# the peers time themselves; shardkit logs every WARMUP_STEPS steps, so the elapsed_s of its
# metrics.jsonl records give the same measure. $$ (the shell hyperfine starts) names a fresh
# run folder. Short runs (WARMUP_STEPS steps) only serve the CPU-time difference
# (user+sys of a full run minus a short run = CPU seconds of STEPS-WARMUP_STEPS steps), which
# stays meaningful when other processes compete for the cores.
SK_CMD="$SK_MODEL --steps=$STEPS --output_dir='$OUT/train_runs/sk.'\$\$"
SK_SHORT="$SK_MODEL --steps=$WARMUP_STEPS --output_dir='$OUT/train_runs/short.'\$\$"
LT_CMD="'$BIN/bench_libtorch_mlp' $MODEL --steps=$STEPS --warmup_steps=$WARMUP_STEPS --out='$OUT/train_peers.jsonl'"
LT_SHORT="'$BIN/bench_libtorch_mlp' $MODEL --steps=$WARMUP_STEPS --warmup_steps=$((WARMUP_STEPS - 1))"
PY_CMD="'$TORCH_PYTHON' '$SRC/bench/torch_mlp.py' $MODEL --steps=$STEPS --warmup_steps=$WARMUP_STEPS --out='$OUT/train_peers.jsonl'"
PY_SHORT="'$TORCH_PYTHON' '$SRC/bench/torch_mlp.py' $MODEL --steps=$WARMUP_STEPS --warmup_steps=$((WARMUP_STEPS - 1))"
# Rounds of one run per command, interleaved, so that a change in the machine's load hits
# all three programs alike (the first round also does hyperfine's warm-up run).
for ((round = 1; round <= RUNS; round++)); do
  echo "   round $round of $RUNS" >&2
  hyperfine --warmup "$((round == 1 ? 1 : 0))" --runs 1 --export-json "$OUT/train_hyperfine.$round.json" \
    -n shardkit "$SK_CMD" -n libtorch "$LT_CMD" -n python "$PY_CMD" \
    -n shardkit-short "$SK_SHORT" -n libtorch-short "$LT_SHORT" -n python-short "$PY_SHORT" >&2
done

# --- 2. safetensors ----------------------------------------------------------------------
echo "== 2. safetensors save/load (~1 GB)" >&2
"$BIN/bench_safetensors_io" --file="$TMP/shardkit.safetensors" --reps="$ST_REPS" \
  --out="$OUT/safetensors.jsonl" >&2
if [[ "$HAVE_SAFETENSORS" = 1 ]]; then
  "$TORCH_PYTHON" "$SRC/bench/safetensors_io.py" --source="$TMP/shardkit.safetensors" \
    --file="$TMP/python.safetensors" --reps="$ST_REPS" --out="$OUT/safetensors.jsonl" >&2
  if cmp -s "$TMP/shardkit.safetensors" "$TMP/python.safetensors"; then
    echo "byte-identical" > "$OUT/safetensors_identical.txt"
  else
    echo "NOT byte-identical" > "$OUT/safetensors_identical.txt"
  fi
else
  echo "   $TORCH_PYTHON has no safetensors: Python side skipped (see the header of this script)" >&2
fi
rm -f "$TMP"/*.safetensors

# --- 3. start-up -------------------------------------------------------------------------
echo "== 3. start-up" >&2
hyperfine --warmup 1 --runs 5 --export-json "$OUT/startup_hyperfine.json" \
  -n "LibTorch floor (bench_libtorch_startup)" "'$BIN/bench_libtorch_startup'" \
  -n "Python floor (import torch)" "'$TORCH_PYTHON' -c 'import torch'" \
  -n "shardkit-train --help" "'$BIN/shardkit-train' --help" \
  -n "shardkit-train --steps=1" \
  "'$BIN/shardkit-train' --steps=1 --save_checkpoint=false --num_threads=1 --output_dir='$OUT/train_runs/one.'\$\$" >&2
"$TORCH_PYTHON" "$SRC/bench/startup_probe.py" --runs 5 --match 'step 1/1' --out "$OUT/startup_probe.jsonl" -- \
  "$BIN/shardkit-train" --steps=1 --save_checkpoint=false --num_threads=1 \
  --output_dir="$OUT/train_runs/probe.{run}" >&2

sed -i "s|\"load_before\"|\"load_after\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"load_before\"|" "$OUT/meta.json"
"$TORCH_PYTHON" "$SRC/bench/summarize.py" "$OUT"
echo "(written to $OUT/results.md)" >&2
