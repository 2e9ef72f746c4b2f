#!/usr/bin/env bash
# ACT training speed, shardkit-train against LeRobot's own lerobot-train, on the tiny LeRobot video
# dataset: default ACT size (resnet18, 51.7 M parameters), batch 8, no data workers, the same
# number of threads, CPU. LeRobot runs on its own torch (2.11 in its 0.6.1 venv), shardkit on 2.15.
# Each side runs SHORT and LONG steps; the difference of the wall times over LONG-SHORT steps is
# the time per step without start-up. Then 2 ranks of each (shardkit-run + ddp against
# lerobot-train under torchrun, which accelerate picks up; 1 thread per rank, batch 8 per rank),
# then shardkit's peak tensor memory per rank, ddp vs fsdp.
# Usage: bench/act/run_act_benchmark.sh [build dir] [python of a lerobot 0.6.1 venv]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
PEER=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkit/venv-lerobot-0.6.1/bin/python}
SHORT=${SHORT:-3}; LONG=${LONG:-13}; THREADS=${THREADS:-2}
DATA=tests/data/lerobot-tiny-v3/video
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
[ -x "$PEER" ] || { echo "no LeRobot venv at $PEER (scripts/setup-lerobot-peer.sh makes it)" >&2; exit 1; }
LEROBOT_TRAIN="$(dirname "$PEER")/lerobot-train"

ours() {  # steps out [extra flags]
  local steps=$1 out=$2; shift 2
  "$BUILD/bin/shardkit-train" --policy.type=act --policy.pretrained_backbone_weights=null \
    --dataset.type=lerobot --dataset.repo_id=tiny/video --dataset.root="$DATA" --batch_size=8 \
    --steps="$steps" --log_freq=1 --save_checkpoint=false --num_threads="$THREADS" --output_dir="$out" "$@"
}
theirs() {  # steps out
  OMP_NUM_THREADS=$THREADS "$LEROBOT_TRAIN" --policy.type=act --policy.device=cpu --policy.push_to_hub=false \
    --policy.pretrained_backbone_weights=null --dataset.repo_id=tiny/video --dataset.root="$DATA" \
    --batch_size=8 --steps="$1" --log_freq=1 --num_workers=0 --save_checkpoint=false \
    --wandb.enable=false --output_dir="$2"
}
ours2() {  # steps out: 2 ranks, ddp, 1 thread each
  local steps=$1 out=$2
  "$BUILD/bin/shardkit-run" --nproc-per-node=2 --master-port=0 "$BUILD/bin/shardkit-train" --policy.type=act \
    --policy.pretrained_backbone_weights=null --dataset.type=lerobot --dataset.repo_id=tiny/video \
    --dataset.root="$DATA" --batch_size=8 --steps="$steps" --log_freq=1 --save_checkpoint=false --num_threads=1 \
    --distributed_backend=ddp --output_dir="$out"
}
theirs2() {  # steps out: 2 ranks under torchrun (accelerate reads its environment), 1 thread each
  OMP_NUM_THREADS=1 "$(dirname "$PEER")/torchrun" --nproc_per_node=2 --master_port="${LEROBOT_PORT:-29531}" \
    "$LEROBOT_TRAIN" --policy.type=act --policy.device=cpu --policy.push_to_hub=false \
    --policy.pretrained_backbone_weights=null --dataset.repo_id=tiny/video --dataset.root="$DATA" \
    --batch_size=8 --steps="$1" --log_freq=1 --num_workers=0 --save_checkpoint=false \
    --wandb.enable=false --output_dir="$2"
}
seconds() {  # command...: wall seconds of the whole process
  local t0 t1; t0=$(date +%s.%N); "$@" >"$WORK/log" 2>&1 || { tail -20 "$WORK/log" >&2; exit 1; }
  t1=$(date +%s.%N); python3 -c "print($t1 - $t0)"
}

declare -A t
for side in ours theirs ours2 theirs2; do
  for n in "$SHORT" "$LONG"; do
    t[$side$n]=$(seconds "$side" "$n" "$WORK/$side-$n")
  done
done
python3 - "$SHORT" "$LONG" "${t[ours$SHORT]}" "${t[ours$LONG]}" "${t[theirs$SHORT]}" "${t[theirs$LONG]}" <<'PY'
import sys
short, long_, o1, o2, t1, t2 = map(float, sys.argv[1:])
ours, theirs = (o2 - o1) / (long_ - short), (t2 - t1) / (long_ - short)
print(f"single process, batch 8: shardkit {ours:.2f} s/step = {8 / ours:.2f} samples/s, "
      f"lerobot-train {theirs:.2f} s/step = {8 / theirs:.2f} samples/s, ratio {theirs / ours:.2f}x")
PY
python3 - "$SHORT" "$LONG" "${t[ours2$SHORT]}" "${t[ours2$LONG]}" "${t[theirs2$SHORT]}" "${t[theirs2$LONG]}" <<'PY'
import sys
short, long_, o1, o2, t1, t2 = map(float, sys.argv[1:])
ours, theirs = (o2 - o1) / (long_ - short), (t2 - t1) / (long_ - short)
print(f"2 ranks (ddp), batch 8 per rank, 1 thread each: shardkit {ours:.2f} s/step = {16 / ours:.2f} samples/s, "
      f"lerobot-train under torchrun {theirs:.2f} s/step = {16 / theirs:.2f} samples/s, ratio {theirs / ours:.2f}x")
PY

# Peak tensor memory per rank (LibTorch's CPU allocator, counted by shardkit) under ddp and fsdp at 2 ranks.
for backend in ddp fsdp; do
  "$BUILD/bin/shardkit-run" --nproc-per-node=2 --master-port=0 "$BUILD/bin/shardkit-train" --policy.type=act \
    --policy.pretrained_backbone_weights=null --dataset.type=lerobot --dataset.repo_id=tiny/video \
    --dataset.root="$DATA" --batch_size=4 --steps=2 --save_checkpoint=false --num_threads=1 \
    --distributed_backend=$backend --output_dir="$WORK/mem-$backend" >"$WORK/mem.log" 2>&1 ||
    { tail -20 "$WORK/mem.log" >&2; exit 1; }
  echo "$backend: $(grep -o 'peak CPU tensor memory while training: [^(]*([0-9]* bytes) on rank [0-9]' "$WORK/mem.log" | sed 's/.*training: //' | paste -sd';')"
done
