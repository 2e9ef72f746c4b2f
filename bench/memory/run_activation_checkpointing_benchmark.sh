#!/usr/bin/env bash
# Activation checkpointing: peak tensor memory and step time of shardkit-train with
# --accelerator.activation_checkpointing.mode=none, selective (every 2nd unit) and full, on ACT
# (default size, resnet18 backbone, 51.7 M parameters; its wrap units are the transformer layers,
# the backbone is not one) and on a 8-layer Llama (seq 512) where the decoder layers' activations
# dominate. One process, CPU, fp32, AdamW.
#
# Activation memory = the trainer's "peak CPU tensor memory while training" minus the model state
# (parameters, gradients and AdamW's two moments: 16 bytes per trainable parameter). Step time =
# the median of metrics.jsonl's update_s after the first step. Ratios are against mode=none.
# Usage: bench/memory/run_activation_checkpointing_benchmark.sh [build dir]
# (needs shardkit-train, the act and llama policies and the test fixtures built).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
STEPS=${STEPS:-6}
THREADS=${THREADS:-2}
PYTHON=${SHARDKIT_PYTHON:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkit/venv-torch-2.15.0/bin/python}
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT

act() {  # out [flags]
  local out=$1; shift
  "$BUILD/bin/shardkit-train" --policy.type=act --policy.pretrained_backbone_weights=null --dataset.type=lerobot \
    --dataset.repo_id=tiny/video --dataset.root=tests/data/lerobot-tiny-v3/video --batch_size="${ACT_BATCH:-16}" \
    --steps="$STEPS" --log_freq=1 --save_checkpoint=false --num_threads="$THREADS" --output_dir="$out" "$@"
}
llama() {  # out [flags]
  local out=$1; shift
  "$BUILD/bin/shardkit-train" --policy.type=llama --policy.vocab_size=8000 --policy.hidden_size=512 \
    --policy.intermediate_size=1376 --policy.num_hidden_layers=8 --policy.num_attention_heads=8 \
    --plugin_path="$BUILD/tests/fixtures/datasets" --dataset.type=tokens_fixture --dataset.vocab_size=8000 \
    --dataset.min_len="${SEQ:-512}" --dataset.max_len="${SEQ:-512}" --dataset.num_samples=64 \
    --batch_size="${LLAMA_BATCH:-8}" --steps="$STEPS" --log_freq=1 --save_checkpoint=false --num_threads="$THREADS" \
    --optimizer.lr=1e-4 --output_dir="$out" "$@"
}

for model in act llama; do
  for mode in none selective full; do
    echo "== $model, activation checkpointing $mode" >&2
    "$model" "$WORK/$model-$mode" --accelerator.activation_checkpointing.mode=$mode \
      >"$WORK/$model-$mode.log" 2>&1 || { tail -20 "$WORK/$model-$mode.log" >&2; exit 1; }
  done
done

"$PYTHON" - "$WORK" <<'PY'
import json, re, statistics, sys
work = sys.argv[1]
def measure(model, mode):
    log = open(f"{work}/{model}-{mode}.log").read()
    params = int(re.search(r"policy \w+ \((\d+) parameters\)", log).group(1))
    peak = int(re.search(r"peak CPU tensor memory while training: .*?\((\d+) bytes\)", log).group(1))
    lines = [json.loads(l) for l in open(f"{work}/{model}-{mode}/metrics.jsonl")][1:]
    return params, peak, peak - 16 * params, statistics.median(l["update_s"] for l in lines)
print("| model | mode | peak tensor memory (MiB) | activations (MiB) | activations vs none | step time (s, median) | step time vs none |")
print("|---|---|---|---|---|---|---|")
for model in ("act", "llama"):
    base = measure(model, "none")
    for mode in ("none", "selective", "full"):
        params, peak, act, step = measure(model, mode)
        print(f"| {model} ({params / 1e6:.1f} M) | {mode} | {peak / 2**20:.0f} | {act / 2**20:.0f} | "
              f"**{act / base[2]:.2f}** | {step:.3f} | **{step / base[3]:.2f}** |")
PY
