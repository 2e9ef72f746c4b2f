#!/bin/sh
# Chat SFT tokens/s on CPU: shardkit-train (qwen2 policy, text dataset rendering conversations with
# the model's chat template) against transformers + TRL 1.16's SFTTrainer, same model folder,
# conversations, batch, sequence length and threads; full fine-tuning and LoRA (r 16, all linear
# layers). Usage: bench/chat_sft/run_chat_sft_benchmark.sh [build dir]
# (needs shardkit-train, the qwen2 policy and the text dataset built: the default build has them).
set -eu
BUILD=${1:-build}
STEPS=${STEPS:-12}
BATCH=${BATCH:-8}
SEQ=${SEQ:-256}
THREADS=${THREADS:-2}
PYTHON=${SHARDKIT_PYTHON:-$HOME/.cache/shardkit/venv-torch-2.15.0/bin/python}
HERE=$(dirname "$0")
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

"$PYTHON" "$HERE/make_fixture.py" "$OUT" 512

# One shardkit run: tokens/s of the steps after the first (real tokens over step time, as the peer).
shardkit() {
  mode=$1
  shift
  echo "== shardkit-train --policy.path=<qwen2 folder> $mode ($STEPS steps, batch $BATCH, max_seq_len $SEQ, $THREADS threads)"
  /usr/bin/time -f "shardkit $mode wall %e s, max RSS %M KB" "$BUILD/bin/shardkit-train" --output_dir="$OUT/run-$mode" \
    --policy.path="$OUT/model" --dataset.type=text --dataset.path="$OUT/chat.jsonl" --dataset.max_seq_len="$SEQ" \
    --dataset.response_only_loss=false --dataset.cache_dir="$OUT/cache" --batch_size="$BATCH" --steps="$STEPS" \
    --log_freq=1 --save_checkpoint=false --num_threads="$THREADS" --optimizer.lr=1e-4 --optimizer.weight_decay=0 \
    --seed=3 "$@" >"$OUT/shardkit-$mode.log" 2>&1 || { cat "$OUT/shardkit-$mode.log"; exit 1; }
  grep "wall" "$OUT/shardkit-$mode.log" || true
  "$PYTHON" - "$OUT/run-$mode/metrics.jsonl" "$mode" <<'PY'
import json, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[1])][1:]
# tokens_per_s counts the real tokens (padding left out) over step_s: their product is the step's tokens.
print(json.dumps({"peer": "shardkit " + sys.argv[2], "s_per_step": statistics.median(l["step_s"] for l in lines),
                  "tokens_per_s": sum(l["tokens_per_s"] * l["step_s"] for l in lines) / sum(l["step_s"] for l in lines),
                  "steps": len(lines)}))
PY
}

peer() {
  echo "== transformers + TRL SFTTrainer $1"
  /usr/bin/time -f "trl $1 wall %e s, max RSS %M KB" "$PYTHON" "$HERE/trl_sft.py" "$OUT/model" "$OUT/chat.jsonl" \
    "$SEQ" "$BATCH" "$STEPS" "$THREADS" "$1" 2>"$OUT/trl-$1.err" || { cat "$OUT/trl-$1.err"; exit 1; }
  grep "wall" "$OUT/trl-$1.err" || true
}

shardkit full
peer full
shardkit lora --peft.r=16 --peft.lora_alpha=32 --peft.target_modules=all-linear
peer lora
