#!/bin/sh
# Tokens/s of a fine-tune step of a 74.9 M-parameter Llama on CPU: shardkit-train (llama policy,
# tokens_fixture data of fixed length) against PyTorch + transformers (+ PEFT for LoRA) with a
# plain loop, same batch, sequence length and threads, alternating the two sides.
#
#   bench/llama/run_llama_benchmark.sh [build dir]
#
# MODES: full and/or lora (LoRA r 16, alpha 32, every linear layer but lm_head on both sides;
# shardkit's LoRA fine-tunes a saved Hugging Face folder of the model, which the peer writes).
# RANKS: 1 and/or 2 (2: shardkit-run --nproc-per-node=2 with ddp against torchrun with PyTorch
# DDP over Gloo; THREADS intra-op threads in all, shared out among the ranks; BATCH per rank;
# CPU_BIND=1, the default: each rank of both sides pinned to its own share of the CPUs).
# ROUNDS: rounds of every mode and rank count, the sides alternating. Prints one JSON line per run
# (tokens/s of the whole cluster: median step time after the first step) and a table of medians.
# Needs the llama plugin and the test fixtures built: ninja -C build shardkit-policy-llama
# shardkit-dataset-tokens_fixture shardkit-train shardkit-run.
set -eu
BUILD=${1:-build}
STEPS=${STEPS:-6}
BATCH=${BATCH:-4}
SEQ=${SEQ:-256}
THREADS=${THREADS:-2}
MODES=${MODES:-full}
RANKS=${RANKS:-1}
ROUNDS=${ROUNDS:-1}
CPU_BIND=${CPU_BIND:-1}
export BENCH_CPU_BIND=$CPU_BIND
PYTHON=${SHARDKIT_PYTHON:-$HOME/.cache/shardkit/venv-torch-2.15.0/bin/python}
HERE=$(dirname "$0")
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
RESULTS="$OUT/results.jsonl"

case " $MODES " in *" lora "*)
  echo "== writing the model as a Hugging Face folder for the LoRA runs"
  "$PYTHON" "$HERE/torch_llama.py" --save "$OUT/model" ;;
esac

shardkit() { # mode ranks
  threads=$((THREADS / $2)); [ "$threads" -ge 1 ] || threads=1
  if [ "$1" = lora ]; then
    model="--policy.path=$OUT/model --peft.r=16 --peft.lora_alpha=32 --peft.target_modules=all-linear"
  else
    model="--policy.type=llama --policy.vocab_size=32000 --policy.hidden_size=768 --policy.intermediate_size=2048
      --policy.num_hidden_layers=8 --policy.num_attention_heads=12 --policy.num_key_value_heads=4
      --policy.tie_word_embeddings=true"
  fi
  launcher=""
  [ "$2" -eq 1 ] || launcher="$BUILD/bin/shardkit-run --master-port=0 --nproc-per-node=$2"
  [ "$2" -eq 1 ] || [ "$CPU_BIND" != 1 ] || launcher="$launcher --cpu-bind=cores"
  rm -rf "$OUT/run"
  # shellcheck disable=SC2086 # $model and $launcher are word lists
  /usr/bin/time -f "shardkit $1 x$2 wall %e s, max RSS %M KB" $launcher "$BUILD/bin/shardkit-train" \
    --output_dir="$OUT/run" $model --plugin_path="$BUILD/tests/fixtures/datasets" --dataset.type=tokens_fixture \
    --dataset.vocab_size=32000 --dataset.min_len="$SEQ" --dataset.max_len="$SEQ" --dataset.num_samples=64 \
    --batch_size="$BATCH" --steps="$STEPS" --log_freq=1 --save_checkpoint=false --num_threads="$threads" \
    --optimizer.lr=1e-4 >"$OUT/shardkit.log" 2>&1 || { cat "$OUT/shardkit.log"; exit 1; }
  grep "wall" "$OUT/shardkit.log" || true
  # Median update time per step after the first (metrics.jsonl's update_s, rank 0's).
  "$PYTHON" - "$OUT/run/metrics.jsonl" "$BATCH" "$SEQ" "$1" "$2" <<'PY' | tee -a "$RESULTS"
import json, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[1])][1:]
s = statistics.median(l["update_s"] for l in lines)
ranks = int(sys.argv[5])
print(json.dumps({"peer": "shardkit", "mode": sys.argv[4], "ranks": ranks, "s_per_step": s,
                  "tokens_per_s": ranks * int(sys.argv[2]) * int(sys.argv[3]) / s}))
PY
}

peer() { # mode ranks
  threads=$((THREADS / $2)); [ "$threads" -ge 1 ] || threads=1
  launcher="$PYTHON"
  port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  [ "$2" -eq 1 ] || launcher="$PYTHON -m torch.distributed.run --nproc_per_node=$2 --master_port=$port"
  # shellcheck disable=SC2086
  # Its JSON line goes to a file first: a failed run must stop the script, not vanish in a pipe.
  OMP_NUM_THREADS=$threads /usr/bin/time -f "peer $1 x$2 wall %e s, max RSS %M KB" $launcher \
    "$HERE/torch_llama.py" "$STEPS" "$BATCH" "$SEQ" "$threads" "$1" >"$OUT/peer.out" 2>"$OUT/peer.err" \
    || { cat "$OUT/peer.err"; exit 1; }
  tee -a "$RESULTS" <"$OUT/peer.out"
  grep "wall" "$OUT/peer.err" || true
}

round=1
while [ "$round" -le "$ROUNDS" ]; do
  for ranks in $RANKS; do
    for mode in $MODES; do
      echo "== round $round: $mode, $ranks rank(s), batch $BATCH x $SEQ tokens per rank, $THREADS threads, $STEPS steps"
      if [ $((round % 2)) -eq 1 ]; then shardkit "$mode" "$ranks"; peer "$mode" "$ranks"
      else peer "$mode" "$ranks"; shardkit "$mode" "$ranks"; fi
    done
  done
  round=$((round + 1))
done

"$PYTHON" - "$RESULTS" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
print("\n| mode | ranks | shardkit tokens/s, median (min-max) | peer tokens/s, median (min-max) | ratio of medians |")
print("|---|---|---|---|---|")
for key in sorted({(r["mode"], r["ranks"]) for r in runs}):
    sides = [[r["tokens_per_s"] for r in runs if (r["mode"], r["ranks"]) == key and (r["peer"] == "shardkit") == s]
             for s in (True, False)]
    cells = [f"{statistics.median(v):.0f} ({min(v):.0f}-{max(v):.0f})" for v in sides]
    print(f"| {key[0]} | {key[1]} | {cells[0]} | {cells[1]} | "
          f"**{statistics.median(sides[0]) / statistics.median(sides[1]):.2f}x** |")
PY
