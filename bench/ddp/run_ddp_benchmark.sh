#!/usr/bin/env bash
# DDP throughput benchmark: shardkit's ddp backend vs PyTorch's DistributedDataParallel; prints a markdown report.
#
# Usage: bench/ddp/run_ddp_benchmark.sh [BUILD_DIR]     (default: build, relative to the source tree)
#
# Runs, in interleaved rounds (one run of each command per round, the order rotating):
#   sk-ddp                  shardkit-run --nproc-per-node=NPROC shardkit-train (ddp, defaults:
#                           overlap=true, 25 MB buckets)
#   sk-ddp-no-overlap       the same with --accelerator.ddp.overlap=false (all-reduce after backward)
#   sk-ddp-smallbuckets     --accelerator.ddp.bucket_cap_mb=SMALL_BUCKET_MB, overlap on
#   sk-ddp-smallbuckets-no-overlap   the same, overlap off
#   sk-1rank                shardkit-run --nproc-per-node=1 (backend auto = single): the scaling base
#   py-ddp                  python3 -m torch.distributed.run ... bench/ddp/torch_ddp_mlp.py (PyTorch
#                           DDP over Gloo), same model, batch per rank and process count
# plus short runs (WARMUP_STEPS steps) of sk-ddp, sk-1rank and py-ddp, and reports whole-cluster
# samples/s after the warm-up steps (shardkit: metrics.jsonl; PyTorch: the same measure, printed
# by the peer), samples per CPU-second of the measured steps (hyperfine's user+sys of a full run
# minus a short run), whole-process wall times (hyperfine) and their ratios.
# Raw files and results.md go to RESULTS_DIR (default BUILD_DIR/bench-results/ddp-<date-time>);
# results.md is also printed; each timed run's output is kept in logs/NAME.rROUND.log. A run that
# fails does not stop the rounds: the report lists it with the end of its log and the script
# exits 1. About 7 minutes on 2 cores with the defaults.
#
# Needs: a built tree (shardkit-train, shardkit-run and the built-in plugins; the script builds the
# target shardkit_all_apps_and_plugins first unless BUILD_FIRST=0), hyperfine, and a Python with
# PyTorch whose torch.distributed has Gloo (TORCH_PYTHON, default the venv scripts/setup.sh
# made: PyTorch 2.15.0, the same wheel and kernels as shardkit's LibTorch).
# Knobs (environment): RUNS (rounds, default 5), STEPS (60), WARMUP_STEPS (10, also shardkit's
# --log_freq), HIDDEN_DIM (256), NUM_BLOCKS (2), EXPANSION (2), BATCH_SIZE (per process, 32),
# NPROC (2), SMALL_BUCKET_MB (1; 0 skips the two small-bucket commands), BUILD_FIRST (1),
# JOBS (build parallelism, 2), RESULTS_DIR, TORCH_PYTHON, CPU_BIND (1: each rank of both sides
# pinned to its own share of the CPUs, shardkit-run --cpu-bind=cores and the same split in the
# peer; 0: the scheduler places them).
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-build}"
[[ "$BUILD" = /* ]] || BUILD="$SRC/$BUILD"
RUNS="${RUNS:-5}"
STEPS="${STEPS:-60}"
WARMUP_STEPS="${WARMUP_STEPS:-10}"
HIDDEN_DIM="${HIDDEN_DIM:-256}"
NUM_BLOCKS="${NUM_BLOCKS:-2}"
EXPANSION="${EXPANSION:-2}"
BATCH_SIZE="${BATCH_SIZE:-32}"
NPROC="${NPROC:-2}"
SMALL_BUCKET_MB="${SMALL_BUCKET_MB:-1}"
BUILD_FIRST="${BUILD_FIRST:-1}"
JOBS="${JOBS:-2}"
CPU_BIND="${CPU_BIND:-1}"
TORCH_PYTHON="${TORCH_PYTHON:-${SHARDKIT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkit/venv-torch-2.15.0}/bin/python}"
STATE_DIM=16
ACTION_DIM=4

die() { echo "run_ddp_benchmark.sh: $*" >&2; exit 1; }
command -v hyperfine >/dev/null || die "hyperfine is not installed (apt-get install hyperfine)"
"$TORCH_PYTHON" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
  die "$TORCH_PYTHON cannot import torch with Gloo; set TORCH_PYTHON to a Python with PyTorch (scripts/setup.sh makes the venv with torch 2.15.0)"
((WARMUP_STEPS >= 1 && STEPS > WARMUP_STEPS)) || die "need 1 <= WARMUP_STEPS < STEPS (got $WARMUP_STEPS, $STEPS)"
((NPROC >= 2)) || die "NPROC=$NPROC: the benchmark compares NPROC processes with one; use 2 or more"

if [[ "$BUILD_FIRST" = 1 ]]; then
  # Configured (against the venv's LibTorch 2.15) by the set-up script.
  [[ -f "$BUILD/CMakeCache.txt" ]] ||
    SHARDKIT_BUILD_TARGETS=shardkit_all_apps_and_plugins "$SRC/scripts/setup.sh" "$BUILD" >&2
  cmake --build "$BUILD" --target shardkit_all_apps_and_plugins -j"$JOBS" >&2
fi
BIN="$BUILD/bin"
for exe in shardkit-train shardkit-run; do
  [[ -x "$BIN/$exe" ]] || die "$BIN/$exe is missing; build the tree (or run with BUILD_FIRST=1)"
done

# One intra-op thread everywhere (shardkit-run and torchrun would set OMP_NUM_THREADS=1 anyway).
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

OUT="${RESULTS_DIR:-$BUILD/bench-results/ddp-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT/runs" "$OUT/preflight" "$OUT/logs"
free_port() { "$TORCH_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# --- the commands ------------------------------------------------------------------------
SK_TRAIN="'$BIN/shardkit-train' --policy.type=mlp --policy.hidden_dim=$HIDDEN_DIM"
SK_TRAIN="$SK_TRAIN --policy.num_blocks=$NUM_BLOCKS --policy.expansion=$EXPANSION --batch_size=$BATCH_SIZE"
SK_TRAIN="$SK_TRAIN --dataset.state_dim=$STATE_DIM --dataset.action_dim=$ACTION_DIM"
SK_TRAIN="$SK_TRAIN --save_checkpoint=false --num_threads=1 --log_freq=$WARMUP_STEPS"
SK_RUN="'$BIN/shardkit-run' --master-port=0"
[[ "$CPU_BIND" = 1 ]] && SK_RUN="$SK_RUN --cpu-bind=cores"
NAMES=(sk-ddp sk-ddp-no-overlap)
declare -A EXTRA=([sk-ddp]="" [sk-ddp-no-overlap]="--accelerator.ddp.overlap=false")
if [[ "$SMALL_BUCKET_MB" != 0 ]]; then
  NAMES+=(sk-ddp-smallbuckets sk-ddp-smallbuckets-no-overlap)
  EXTRA[sk-ddp-smallbuckets]="--accelerator.ddp.bucket_cap_mb=$SMALL_BUCKET_MB"
  EXTRA[sk-ddp-smallbuckets-no-overlap]="--accelerator.ddp.bucket_cap_mb=$SMALL_BUCKET_MB --accelerator.ddp.overlap=false"
fi
NAMES+=(sk-1rank py-ddp)
# Short runs (WARMUP_STEPS steps) of three commands: user+sys of a full run minus that of a short
# run is the CPU time of the measured steps alone (start-up cancels out), a figure that waiting
# for a busy core does not inflate.
SHORT=(sk-ddp-short sk-1rank-short py-ddp-short)

# command NAME RUN_TAG PORT: the shell command line of one run (NAME-short: WARMUP_STEPS steps).
command_of() {
  local name="$1" tag="$2" port="$3" steps="$STEPS"
  local base="${name%-short}"
  [[ "$base" = "$name" ]] || steps="$WARMUP_STEPS"
  case "$base" in
    sk-1rank)
      echo "$SK_RUN --nproc-per-node=1 $SK_TRAIN --steps=$steps --output_dir='$OUT/runs/$name.$tag'" ;;
    sk-*)
      echo "$SK_RUN --nproc-per-node=$NPROC $SK_TRAIN ${EXTRA[$base]} --steps=$steps --output_dir='$OUT/runs/$name.$tag'" ;;
    py-ddp)
      echo "'$TORCH_PYTHON' -m torch.distributed.run --nproc_per_node=$NPROC --master_port=$port" \
           "'$SRC/bench/ddp/torch_ddp_mlp.py' --hidden_dim=$HIDDEN_DIM" \
           "--num_blocks=$NUM_BLOCKS --expansion=$EXPANSION --batch_size=$BATCH_SIZE --state_dim=$STATE_DIM" \
           "--action_dim=$ACTION_DIM --num_threads=1 --steps=$steps --warmup_steps=$((steps > WARMUP_STEPS ? WARMUP_STEPS : steps - 1))" \
           "--program=$name --out='$OUT/python.$tag.jsonl' --cpu_bind=$CPU_BIND" ;;
  esac
}

LIBTORCH_VERSION="$("$BIN/shardkit-env" 2>/dev/null | sed -n 's/^LibTorch \([0-9.]*\).*/\1/p' | head -1 || true)"
cat > "$OUT/meta.json" <<EOF
{"cpu": "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)",
 "cores": $(getconf _NPROCESSORS_ONLN), "load_before": "$(cut -d' ' -f1-3 /proc/loadavg)",
 "libtorch": "${LIBTORCH_VERSION:-?}",
 "python_torch": "$("$TORCH_PYTHON" -c 'import torch; print(torch.__version__)')",
 "hyperfine": "$(hyperfine --version | cut -d' ' -f2)", "date": "$(date -u +%Y-%m-%dT%H:%MZ)",
 "runs": $RUNS, "steps": $STEPS, "warmup_steps": $WARMUP_STEPS, "hidden_dim": $HIDDEN_DIM,
 "num_blocks": $NUM_BLOCKS, "expansion": $EXPANSION, "batch_size": $BATCH_SIZE, "nproc": $NPROC,
 "small_bucket_mb": $SMALL_BUCKET_MB, "cpu_bind": $CPU_BIND, "state_dim": $STATE_DIM, "action_dim": $ACTION_DIM}
EOF
: > "$OUT/commands.txt"

# --- preflight: every command once, 2 steps, output kept -----------------------------------
# Shows a failure with its own messages before any timing, fills the page cache, and keeps
# the start-up lines (the ddp bucket counts) in preflight/NAME.log.
echo "== preflight (2 steps each)" >&2
for name in "${NAMES[@]}"; do
  cmd="$(STEPS=2 command_of "$name" preflight "$(free_port)")"
  if ! bash -c "$cmd" > "$OUT/preflight/$name.log" 2>&1; then
    tail -n 30 "$OUT/preflight/$name.log" >&2
    die "$name failed in the preflight run (command: $cmd); full output in $OUT/preflight/$name.log"
  fi
done

# --- timed rounds --------------------------------------------------------------------------
ALL=("${NAMES[@]}" "${SHORT[@]}")
N=${#ALL[@]}
for ((round = 1; round <= RUNS; round++)); do
  echo "== round $round of $RUNS" >&2
  args=()
  for ((i = 0; i < N; i++)); do
    name="${ALL[$(((i + round - 1) % N))]}"  # rotate, so no command always follows the same one
    cmd="$(command_of "$name" "r$round" "$(free_port)")"
    echo "round $round $name: $cmd" >> "$OUT/commands.txt"
    args+=(-n "$name" "$cmd > '$OUT/logs/$name.r$round.log' 2>&1")
  done
  # -i: a failed run does not end the benchmark; the report lists it with the end of its log
  # (logs/NAME.rN.log) and the script exits 1.
  hyperfine -i --runs 1 --export-json "$OUT/hyperfine.r$round.json" "${args[@]}" >&2
done

sed -i "s|\"load_before\"|\"load_after\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"load_before\"|" "$OUT/meta.json"
status=0
"$TORCH_PYTHON" "$SRC/bench/ddp/summarize_ddp.py" "$OUT" || status=$?
echo "(written to $OUT/results.md)" >&2
exit "$status"
