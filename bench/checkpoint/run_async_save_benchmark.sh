#!/usr/bin/env bash
# Asynchronous checkpoint saves: how long a save blocks training with --checkpoint.async_mode=async
# against a synchronous save of the same state, and how much slower the steps that run while the
# background writer works are. Prints a markdown report.
#
# Usage: bench/checkpoint/run_async_save_benchmark.sh [BUILD_DIR]   (default: build)
#
# The model: the mlp policy, HIDDEN_DIM x NUM_BLOCKS (2048 x 5: 84 M parameters, so that a
# checkpoint's model and AdamW state are about 1 GB), trained STEPS steps with a save every
# SAVE_FREQ steps, under NPROC processes (1: the single backend; 2 or more: fsdp, each rank
# writing its shard). Three runs per round: no checkpoints (the step-time floor), synchronous
# saves, asynchronous saves; every step is logged (metrics.jsonl) and each save logs what it cost
# ("checkpoint saved: ... (in X s)", "training blocked X s", "written in the background in X s").
# summarize_async_save.py turns the logs into the report. Checkpoints go to OUT (default a new
# folder under /tmp), removed at the end unless KEEP=1.
# Knobs (environment): ROUNDS (2), STEPS (24), SAVE_FREQ (8), HIDDEN_DIM (2048), NUM_BLOCKS (5),
# BATCH_SIZE (8), NPROC (1), FORMAT (safetensors), THREADS (1 intra-op thread per process).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
ROUNDS=${ROUNDS:-2} STEPS=${STEPS:-24} SAVE_FREQ=${SAVE_FREQ:-8} HIDDEN_DIM=${HIDDEN_DIM:-2048}
NUM_BLOCKS=${NUM_BLOCKS:-5} BATCH_SIZE=${BATCH_SIZE:-8} NPROC=${NPROC:-1} FORMAT=${FORMAT:-safetensors}
THREADS=${THREADS:-1}
OUT=${OUT:-$(mktemp -d)}
trap '[ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT

backend=(--distributed_backend=single)
[ "$NPROC" -gt 1 ] && backend=(--distributed_backend=fsdp --parallelism.dp_shard="$NPROC")
run() {  # name [flags]
  local name=$1; shift
  rm -rf "$OUT/$name"
  OMP_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS "$BUILD/bin/shardkit-run" --nproc-per-node="$NPROC" \
    --master-port=0 "$BUILD/bin/shardkit-train" --policy.hidden_dim="$HIDDEN_DIM" --policy.num_blocks="$NUM_BLOCKS" \
    --batch_size="$BATCH_SIZE" --steps="$STEPS" --save_freq="$SAVE_FREQ" --log_freq=1 --num_threads="$THREADS" \
    --checkpoint_format="$FORMAT" "${backend[@]}" --output_dir="$OUT/$name" "$@" > "$OUT/$name.log" 2>&1 ||
    { tail -20 "$OUT/$name.log"; exit 1; }
}
for round in $(seq "$ROUNDS"); do
  echo "round $round of $ROUNDS" >&2
  run "none-$round" --save_checkpoint=false
  run "sync-$round" --checkpoint.async_mode=disabled
  run "async-$round" --checkpoint.async_mode=async
  rm -rf "$OUT/sync-$round/checkpoints" "$OUT/async-$round/checkpoints"
done
python3 bench/checkpoint/summarize_async_save.py "$OUT" "$ROUNDS" \
  "mlp ${HIDDEN_DIM} x ${NUM_BLOCKS} blocks, ${NPROC} process(es) (${backend[*]}), format ${FORMAT}, ${STEPS} steps, a save every ${SAVE_FREQ}"
