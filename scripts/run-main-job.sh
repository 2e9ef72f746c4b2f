#!/usr/bin/env bash
# Sets up, builds and runs the main job: LeRobot's ACT (a reduced size, about 5 minutes on 2
# cores) trained on the LeRobot dataset shipped in tests/data (written by LeRobot 0.6.1: one AV1
# camera, 6-d state and actions), 2 processes of data parallelism (DDP over Gloo) through
# shardkit-run, writing checkpoints under outputs/ that LeRobot's ACTPolicy.from_pretrained() and
# its processor factory load (the README's main command). Extra flags go to shardkit-train (later
# flags win); NPROC=N changes the process count, OUTPUT_DIR=DIR the run folder.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
# Only what the run needs (the apps and the built-in plugins); the test command builds the rest.
SHARDKIT_BUILD_TARGETS=${SHARDKIT_BUILD_TARGETS:-shardkit_all_apps_and_plugins} scripts/setup.sh "$BUILD_DIR"
OUT=${OUTPUT_DIR:-outputs/train/main-job-$(date +%Y%m%d-%H%M%S)}
"$BUILD_DIR"/bin/shardkit-run --nproc-per-node="${NPROC:-2}" --master-port=0 \
  "$BUILD_DIR"/bin/shardkit-train --policy.type=act --policy.pretrained_backbone_weights=null \
  --policy.dim_model=64 --policy.n_heads=4 --policy.dim_feedforward=256 --policy.n_encoder_layers=2 \
  --policy.n_vae_encoder_layers=2 --policy.chunk_size=10 --policy.n_action_steps=10 \
  --dataset.type=lerobot --dataset.repo_id=lerobot-tiny/video --dataset.root=tests/data/lerobot-tiny-v3/video \
  --optimizer.lr=3e-4 --policy.optimizer_lr_backbone=3e-4 --steps=800 --batch_size=8 --log_freq=50 --save_freq=200 \
  --output_dir="$OUT" "$@"
echo "[main job] checkpoints in $OUT/checkpoints (last -> $(readlink "$OUT/checkpoints/last"))"
