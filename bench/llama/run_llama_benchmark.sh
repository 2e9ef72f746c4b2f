#!/bin/sh
# Tokens/s of a full fine-tune step of a 74.9 M-parameter Llama on CPU: shardkit-train (llama
# policy, tokens_fixture data of fixed length) against PyTorch + transformers with a plain loop,
# same batch, sequence length and threads. Usage: bench/llama/run_llama_benchmark.sh [build dir]
# (needs the llama plugin and the test fixtures built: ninja -C build shardkit-policy-llama
# shardkit-dataset-tokens_fixture shardkit-train).
set -eu
BUILD=${1:-build}
STEPS=${STEPS:-6}
BATCH=${BATCH:-4}
SEQ=${SEQ:-256}
THREADS=${THREADS:-2}
PYTHON=${SHARDKIT_PYTHON:-$HOME/.cache/shardkit/venv-torch-2.15.0/bin/python}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

echo "== shardkit-train --policy.type=llama ($STEPS steps, batch $BATCH x $SEQ tokens, $THREADS threads)"
/usr/bin/time -f "shardkit wall %e s, max RSS %M KB" "$BUILD/bin/shardkit-train" --output_dir="$OUT/run" \
  --policy.type=llama --policy.vocab_size=32000 --policy.hidden_size=768 --policy.intermediate_size=2048 \
  --policy.num_hidden_layers=8 --policy.num_attention_heads=12 --policy.num_key_value_heads=4 \
  --policy.tie_word_embeddings=true --plugin_path="$BUILD/tests/fixtures/datasets" --dataset.type=tokens_fixture \
  --dataset.vocab_size=32000 --dataset.min_len="$SEQ" --dataset.max_len="$SEQ" --dataset.num_samples=64 \
  --batch_size="$BATCH" --steps="$STEPS" --log_freq=1 --save_checkpoint=false --num_threads="$THREADS" \
  --optimizer.lr=1e-4 >"$OUT/shardkit.log" 2>&1 || { cat "$OUT/shardkit.log"; exit 1; }
grep -o 'policy llama ([0-9,]* parameters)' "$OUT/shardkit.log" || true
# Median update time per step after the first (metrics.jsonl's update_s).
"$PYTHON" - "$OUT/run/metrics.jsonl" "$BATCH" "$SEQ" <<'PY'
import json, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[1])][1:]
s = statistics.median(l["update_s"] for l in lines)
print(json.dumps({"peer": "shardkit", "s_per_step": s, "tokens_per_s": int(sys.argv[2]) * int(sys.argv[3]) / s}))
PY

echo "== PyTorch 2.15 + transformers, plain loop"
/usr/bin/time -f "pytorch wall %e s, max RSS %M KB" "$PYTHON" "$(dirname "$0")/torch_llama.py" "$STEPS" "$BATCH" "$SEQ" "$THREADS"
