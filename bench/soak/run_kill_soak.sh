#!/usr/bin/env bash
# Kill soak: 2 ranks train under fsdp and under zero 3 while a random rank is SIGKILLed every 10-40 s
# for SOAK_MINUTES; shardkit-run restarts the group each time (--max-restarts large) and the ranks
# resume from the newest complete checkpoint. When the time is up the launcher gets SIGTERM: every
# rank finishes its step, saves it and exits 0. The same run is then trained again, left alone, to
# the step the soaked run reached, and the two final weights must be equal bit for bit (the
# learning rate is constant, so a run's length does not change its steps). Prints one line per
# backend: kills, restarts, the step reached, and whether the weights match; exits 1 if any run
# failed or differs.
#
# Usage: bench/soak/run_kill_soak.sh [BUILD_DIR]   (default: build; not part of the test suite)
# Knobs (environment): SOAK_MINUTES (30), BACKENDS ("fsdp zero"), SAVE_FREQ (50), HIDDEN_DIM (256),
# KILL_MIN_S (10), KILL_MAX_S (40), SEED (1: the kill schedule), OUT (a new folder under /tmp;
# KEEP=1 keeps it).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
SOAK_MINUTES=${SOAK_MINUTES:-30} BACKENDS=${BACKENDS:-"fsdp zero"}
SAVE_FREQ=${SAVE_FREQ:-50} HIDDEN_DIM=${HIDDEN_DIM:-256} KILL_MIN_S=${KILL_MIN_S:-10} KILL_MAX_S=${KILL_MAX_S:-40}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
trap '[ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT
RANDOM=${SEED:-1}

args() {  # backend output_dir steps
  # zero: stage 3 is its default
  echo --distributed_backend="$1" --parallelism.dp_shard=2 --policy.hidden_dim="$HIDDEN_DIM" --steps="$3" \
    --save_freq="$SAVE_FREQ" --log_freq=1000 --batch_size=8 --num_threads=1 --seed=7 \
    --checkpoint_format=safetensors --save_total_limit=3 --output_dir="$2"
}
weights() { sha256sum "$1/checkpoints/last/pretrained_model/model.safetensors" | cut -d' ' -f1; }
last_step() { basename "$(readlink "$1/checkpoints/last")" | sed 's/^0*//'; }

failed=0
for backend in $BACKENDS; do
  ref="$OUT/$backend-ref" run="$OUT/$backend-soak"
  start=$(date +%s)
  # Long enough never to end by itself: SIGTERM ends it.
  # shellcheck disable=SC2046
  "$BUILD/bin/shardkit-run" --nproc-per-node=2 --master-port=0 --max-restarts=100000 \
    "$BUILD/bin/shardkit-train" $(args "$backend" "$run" 100000000) > "$run.log" 2>&1 &
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
  # Stop the run as a scheduler would, once the group the last kill restarted is training (rank 0
  # logs "training from step" at every start): a worker still loading when SIGTERM comes has no
  # handler yet, and ends by the signal (the launcher then exits 143, the last checkpoint intact).
  # The launcher first notices the last kill and restarts the group (its other worker may take
  # a few seconds to stop), so both counts are read again until the group is up.
  sleep 10
  until [ "$(grep -c "training from step" "$run.log" || true)" -gt "$(grep -c "restarting all workers" "$run.log" || true)" ] ||
    ! kill -0 "$launcher" 2>/dev/null; do
    sleep 1
  done
  sleep 2
  kill -TERM "$launcher" 2>/dev/null || true
  code=0
  wait "$launcher" || code=$?
  restarts=$(grep -c "restarting all workers" "$run.log" || true)
  if [ "$code" -ne 0 ] || [ ! -e "$run/checkpoints/last" ]; then
    echo "$backend: the soaked run failed with exit $code after $kills kills (see $run.log)"
    failed=1
    continue
  fi
  steps=$(last_step "$run")
  # shellcheck disable=SC2046
  "$BUILD/bin/shardkit-run" --nproc-per-node=2 --master-port=0 "$BUILD/bin/shardkit-train" $(args "$backend" "$ref" "$steps") \
    > "$ref.log" 2>&1 || { echo "$backend: the uninterrupted run failed (see $ref.log)"; failed=1; continue; }
  if [ "$(last_step "$ref")" = "$steps" ] && [ "$(weights "$ref")" = "$(weights "$run")" ]; then
    echo "$backend: $kills kills over ${soaked} s, $restarts restarts, $steps steps; final weights equal the uninterrupted run's bit for bit"
  else
    echo "$backend: $kills kills, $restarts restarts, $steps steps: final weights DIFFER from the uninterrupted run's"
    failed=1
  fi
done
exit $failed
