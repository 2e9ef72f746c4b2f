#!/usr/bin/env bash
# Sets up, builds and runs the main job: a 2-process data-parallel (DDP over Gloo) run of the
# default policy on the default data through shardkit-run, writing checkpoints under outputs/
# (the README's main command). Extra flags go to shardkit-train; NPROC=N changes the process count,
# OUTPUT_DIR=DIR the run folder (given this way, the closing line below names the right folder).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
# Only what the run needs (the apps and the built-in plugins); the test command builds the rest.
SHARDKIT_BUILD_TARGETS=${SHARDKIT_BUILD_TARGETS:-shardkit_all_apps_and_plugins} scripts/setup.sh "$BUILD_DIR"
OUT=${OUTPUT_DIR:-outputs/train/main-job-$(date +%Y%m%d-%H%M%S)}
"$BUILD_DIR"/bin/shardkit-run --nproc-per-node="${NPROC:-2}" --master-port=0 \
  "$BUILD_DIR"/bin/shardkit-train --steps=2000 --batch_size=8 --log_freq=100 --save_freq=500 \
  --output_dir="$OUT" "$@"
echo "[main job] checkpoints in $OUT/checkpoints (last -> $(readlink "$OUT/checkpoints/last"))"
