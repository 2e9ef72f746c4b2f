#!/usr/bin/env bash
# A model that only sharding can train on this machine: a 0.94 B-parameter Llama (hidden 2048,
# 16 layers, vocab 32000) with AdamW at 2 ranks. ddp would hold 14 GiB of parameters, gradients and
# AdamW state per rank (28 GiB for two), fsdp and zero 3 half of it each. The script:
#   1. --dry_run for ddp, fsdp and zero 3 at 2 ranks (with full activation checkpointing): the plan,
#      the measured activations and whether the 2 processes fit this machine;
#   2. fsdp at 2 ranks trains STEPS steps with full activation checkpointing and saves a dcp
#      checkpoint, then resumes it for one more step; each rank's peak tensor memory (the trainer's
#      count) and peak RSS (GNU time around each rank) are printed.
# Usage: bench/scale/run_sharding_only_benchmark.sh [build dir] (needs the llama policy and the test
# fixtures built; about 25 GB of free disk for the checkpoint).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
STEPS=${STEPS:-2}
OUT=${OUT:-$(mktemp -d)}
trap '[ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT

model=(--policy.type=llama --policy.vocab_size=32000 --policy.hidden_size=2048 --policy.intermediate_size=5504
       --policy.num_hidden_layers=16 --policy.num_attention_heads=16
       --plugin_path="$BUILD/tests/fixtures/datasets" --dataset.type=tokens_fixture --dataset.vocab_size=32000
       --dataset.min_len=128 --dataset.max_len=128 --dataset.num_samples=16 --batch_size=1 --log_freq=1
       --accelerator.activation_checkpointing.mode=full --distributed.timeout_s=1800)

for backend in "ddp --parallelism.dp_replicate=2" "fsdp --parallelism.dp_shard=2" "zero --parallelism.dp_shard=2"; do
  echo "== dry run: --distributed_backend=$backend"
  # shellcheck disable=SC2086
  "$BUILD/bin/shardkit-train" "${model[@]}" --num_threads=2 --dry_run=true --output_dir="$OUT/dry" \
    --distributed_backend=$backend 2>&1 | grep -E "dry run: (per rank|expected|activations|[0-9]+ process)"
done

train() {  # out [flags]: fsdp at 2 ranks, each rank under GNU time
  local out=$1; shift
  "$BUILD/bin/shardkit-run" --nproc-per-node=2 --master-port=0 /usr/bin/time -f "rank peak RSS %M KB" \
    "$BUILD/bin/shardkit-train" "${model[@]}" --num_threads=1 --distributed_backend=fsdp --parallelism.dp_shard=2 \
    --checkpoint_format=dcp --output_dir="$out" "$@" 2>&1 |
    grep -E "peak RSS|peak CPU tensor|training done|checkpoint saved|resumed from|update_s|error" || true
}
echo "== fsdp, 2 ranks: $STEPS steps, then a dcp checkpoint"
start=$(date +%s)
train "$OUT/run" --steps="$STEPS" --save_freq="$STEPS"
echo "   ($(( $(date +%s) - start )) s)"
echo "== fsdp, 2 ranks: resumed for one more step"
start=$(date +%s)
train "$OUT/run" --steps=$((STEPS + 1)) --save_freq=$((STEPS + 1)) --resume=true
echo "   ($(( $(date +%s) - start )) s)"
du -sh "$OUT/run/checkpoints/"* 2>/dev/null | sed 's/^/   checkpoint /'
python3 -c 'import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    print(f"   step {m[\"step\"]}: loss {m[\"loss\"]:.4f}, update {m[\"update_s\"]:.1f} s")' "$OUT/run/metrics.jsonl"
