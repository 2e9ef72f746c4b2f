#!/usr/bin/env bash
# Where a step's time goes: one run each of ddp, fsdp, zero 3 and zero 2 (default buckets, and the
# whole model in one bucket: DeepSpeed's 5e8 elements) on the benchmark model
# (2 ranks over Gloo, one thread each), and the per-step profile each logs at its end (forward,
# backward and optimizer step; for the sharded backends the waits for gathers and reductions,
# the copies and the issuing of collectives), printed as one markdown table in milliseconds.
#
# Usage: bench/fsdp/run_step_profile.sh [BUILD_DIR]   (default: build)
# Knobs (environment): STEPS (60), HIDDEN_DIM (256), NUM_BLOCKS (8), BATCH_SIZE (16), NPROC (2).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
STEPS=${STEPS:-60} HIDDEN_DIM=${HIDDEN_DIM:-256} NUM_BLOCKS=${NUM_BLOCKS:-8} BATCH_SIZE=${BATCH_SIZE:-16} NPROC=${NPROC:-2}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
declare -A EXTRA=([ddp]="--distributed_backend=ddp --parallelism.dp_replicate=$NPROC"
  [fsdp]="--distributed_backend=fsdp --parallelism.dp_shard=$NPROC"
  [zero3]="--distributed_backend=zero --accelerator.zero.stage=3 --parallelism.dp_shard=$NPROC"
  [zero2]="--distributed_backend=zero --accelerator.zero.stage=2 --parallelism.dp_shard=$NPROC"
  [zero2-one-bucket]="--distributed_backend=zero --accelerator.zero.stage=2 --accelerator.zero.reduce_bucket_size=500000000 --parallelism.dp_shard=$NPROC")
echo "mlp hidden $HIDDEN_DIM x $NUM_BLOCKS blocks, batch $BATCH_SIZE per rank, $NPROC ranks x 1 thread, $STEPS steps; ms per optimizer step, the mean of the steps after the first"
echo
echo "| backend | forward | backward | optimizer | step | gather waits | reduction waits | copies | issuing | compute and the rest |"
echo "|---|---|---|---|---|---|---|---|---|---|"
num() { { grep -o "$1 [0-9.]* ms" "$2" || true; } | head -1 | { grep -o "[0-9.]*" || true; } | head -1; }
for name in ddp fsdp zero3 zero2 zero2-one-bucket; do
  log="$OUT/$name.log"
  # shellcheck disable=SC2086
  "$BUILD/bin/shardkit-run" --nproc-per-node="$NPROC" --master-port=0 "$BUILD/bin/shardkit-train" --policy.type=mlp \
    --policy.hidden_dim="$HIDDEN_DIM" --policy.num_blocks="$NUM_BLOCKS" --batch_size="$BATCH_SIZE" --num_threads=1 \
    --steps="$STEPS" --log_freq="$STEPS" --save_checkpoint=false --output_dir="$OUT/$name" ${EXTRA[$name]} > "$log" 2>&1 ||
    { tail -20 "$log" >&2; echo "$name failed" >&2; exit 1; }
  f=$(num forward "$log") b=$(num backward "$log") o=$(num "optimizer step" "$log")
  g=$(num "parameter gathers" "$log") r=$(num "gradient reductions" "$log") c=$(num "flat buffers" "$log") i=$(num "issuing collectives" "$log")
  python3 - "$name" "$f" "$b" "$o" "${g:-}" "${r:-}" "${c:-}" "${i:-}" <<'PY'
import sys
name, *v = sys.argv[1:]
f, b, o = (float(x) for x in v[:3])
parts = [float(x) if x else None for x in v[3:]]
step = f + b + o
known = sum(p for p in parts if p is not None)
cells = [f"{p:.2f}" if p is not None else "" for p in parts]
rest = step - known
print(f"| {name} | {f:.2f} | {b:.2f} | {o:.2f} | {step:.2f} | " + " | ".join(cells) + f" | {rest:.2f} |")
PY
done
