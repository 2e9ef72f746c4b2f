#!/usr/bin/env bash
# Kill soak: 2 ranks train under fsdp and under zero 3 while a random rank is SIGKILLed every 10-40 s
# for SOAK_MINUTES; shardkit-run restarts the group each time (--max-restarts large) and the ranks
# resume from the newest complete checkpoint. Once the killing stops the run finishes, and its final
# weights must equal those of the same run left alone, bit for bit. Prints one line per backend:
# kills, restarts, wall time, and whether the weights match; exits 1 if any run failed or differs.
#
# Usage: bench/soak/run_kill_soak.sh [BUILD_DIR]   (default: build; not part of the test suite)
# Knobs (environment): SOAK_MINUTES (30), BACKENDS ("fsdp zero"), STEPS (the run's length: it must
# outlast the soak; default 400000), SAVE_FREQ (50), HIDDEN_DIM (256), KILL_MIN_S (10), KILL_MAX_S (40),
# SEED (1: the kill schedule), OUT (a new folder under /tmp; KEEP=1 keeps it).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
SOAK_MINUTES=${SOAK_MINUTES:-30} BACKENDS=${BACKENDS:-"fsdp zero"} STEPS=${STEPS:-400000}
SAVE_FREQ=${SAVE_FREQ:-50} HIDDEN_DIM=${HIDDEN_DIM:-256} KILL_MIN_S=${KILL_MIN_S:-10} KILL_MAX_S=${KILL_MAX_S:-40}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
trap '[ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT
RANDOM=${SEED:-1}

args() {  # backend output_dir
  local extra=(--parallelism.dp_shard=2)
  # zero: stage 3 is its default
  echo --distributed_backend="$1" "${extra[@]}" --policy.hidden_dim="$HIDDEN_DIM" --steps="$STEPS" \
    --save_freq="$SAVE_FREQ" --log_freq=1000 --batch_size=8 --num_threads=1 --seed=7 \
    --checkpoint_format=safetensors --save_total_limit=3 --output_dir="$2"
}
weights() { sha256sum "$1/checkpoints/last/pretrained_model/model.safetensors" | cut -d' ' -f1; }

failed=0
for backend in $BACKENDS; do
  ref="$OUT/$backend-ref" run="$OUT/$backend-soak"
  # shellcheck disable=SC2046
  "$BUILD/bin/shardkit-run" --nproc-per-node=2 --master-port=0 "$BUILD/bin/shardkit-train" $(args "$backend" "$ref") \
    > "$ref.log" 2>&1 || { echo "$backend: the reference run failed (see $ref.log)"; failed=1; continue; }
  start=$(date +%s)
  # shellcheck disable=SC2046
  "$BUILD/bin/shardkit-run" --nproc-per-node=2 --master-port=0 --max-restarts=100000 \
    "$BUILD/bin/shardkit-train" $(args "$backend" "$run") > "$run.log" 2>&1 &
  launcher=$!
  kills=0
  while kill -0 "$launcher" 2>/dev/null && [ $(( $(date +%s) - start )) -lt $(( SOAK_MINUTES * 60 )) ]; do
    sleep $(( KILL_MIN_S + RANDOM % (KILL_MAX_S - KILL_MIN_S + 1) ))
    mapfile -t workers < <(pgrep -P "$launcher" || true)
    [ ${#workers[@]} -gt 0 ] || continue
    victim=${workers[$(( RANDOM % ${#workers[@]} ))]}
    kill -KILL "$victim" 2>/dev/null && kills=$((kills + 1))
  done
  soaked=$(( $(date +%s) - start ))
  code=0
  wait "$launcher" || code=$?
  restarts=$(grep -c "restarting all workers" "$run.log" || true)
  if [ "$code" -ne 0 ]; then
    echo "$backend: the soaked run failed with exit $code after $kills kills (see $run.log)"
    failed=1
  elif [ "$(weights "$ref")" = "$(weights "$run")" ]; then
    echo "$backend: $kills kills over ${soaked} s, $restarts restarts, finished in $(( $(date +%s) - start )) s; final weights equal the uninterrupted run's bit for bit"
  else
    echo "$backend: $kills kills, $restarts restarts: final weights DIFFER from the uninterrupted run's"
    failed=1
  fi
done
exit $failed
