#!/usr/bin/env bash
# Llama training on one GPU in bf16: shardkit's ddp and fsdp (NCCL) against PyTorch FSDP2 on the
# same model, batch and sequence length, in one run. Prints one table: tokens/s, MFU (model FLOPs
# per second over the GPU's dense bf16 peak) and peak GPU memory of each.
#
#   bench/gpu/run_gpu_benchmark.sh [build dir]     (scripts/device-check.sh runs it as check (e))
#
# The model defaults to Llama 3.2 1B's shape (hidden 2048, ffn 8192, 16 layers, 32 heads, 8
# key/value heads, vocabulary 128256, tied: 1.24 B parameters), batch 8 x 2048 tokens per GPU,
# fp32 master weights with bf16 compute on both sides, AdamW, random tokens of fixed length.
# Sizes: HIDDEN, FFN, LAYERS, HEADS, KV_HEADS, VOCAB, BATCH, SEQ, STEPS (timed), WARMUP (not timed).
# PEAK_TFLOPS: the GPU's dense bf16 peak (989 for an H100 or H200 SXM, found from nvidia-smi's name).
# NPROC: processes (GPUs); one by default. DEVICE=cpu: a tiny dry run of the whole script on a
# machine without a GPU (Gloo, fp32; no MFU or GPU memory), to check it before a GPU is lent.
# Needs: shardkit-train, shardkit-run, the ddp/fsdp backends, the llama policy, the nccl comm
# plugin and the tokens_fixture dataset (tests/fixtures) built; torch 2.15 + transformers in
# SHARDKIT_PYTHON (the venv scripts/setup.sh makes).
set -euo pipefail
BUILD=${1:-build-gpu}
HERE=$(cd "$(dirname "$0")" && pwd)
PYTHON=${SHARDKIT_PYTHON:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkit/venv-torch-2.15.0/bin/python}
DEVICE=${DEVICE:-cuda}
if [ "$DEVICE" = cpu ]; then  # the dry run's defaults: a few seconds per step on two cores
  : "${HIDDEN:=128}" "${FFN:=256}" "${LAYERS:=2}" "${HEADS:=4}" "${KV_HEADS:=2}" "${VOCAB:=1000}"
  : "${BATCH:=2}" "${SEQ:=64}" "${STEPS:=3}" "${WARMUP:=1}" "${DTYPE:=fp32}"
fi
HIDDEN=${HIDDEN:-2048} FFN=${FFN:-8192} LAYERS=${LAYERS:-16} HEADS=${HEADS:-32} KV_HEADS=${KV_HEADS:-8}
VOCAB=${VOCAB:-128256} BATCH=${BATCH:-8} SEQ=${SEQ:-2048} STEPS=${STEPS:-20} WARMUP=${WARMUP:-5}
DTYPE=${DTYPE:-bf16} NPROC=${NPROC:-1}
OUT=$(mktemp -d)
RESULTS="$OUT/results.jsonl"

for exe in shardkit-train shardkit-run; do
  [ -x "$BUILD/bin/$exe" ] || { echo "run_gpu_benchmark: $BUILD/bin/$exe is not built" >&2; exit 2; }
done
gpu_name=""
if [ "$DEVICE" = cuda ]; then
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  case "$gpu_name" in *H100* | *H200*) PEAK_TFLOPS=${PEAK_TFLOPS:-989} ;; esac
  [ -n "${PEAK_TFLOPS:-}" ] || echo "run_gpu_benchmark: set PEAK_TFLOPS for '$gpu_name' to get MFU" >&2
fi

# The largest memory.used nvidia-smi reports while a command runs (MiB; the whole GPU: the
# CUDA context and each side's caching allocator included).
watch_memory() {
  local file=$1
  echo 0 >"$file"
  [ "$DEVICE" = cuda ] || return 0
  ( peak=0
    while sleep 0.5; do
      used=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1 | tr -d ' ')
      [ "${used:-0}" -gt "$peak" ] && { peak=$used; echo "$peak" >"$file"; }
    done ) &
  WATCHER=$!
}
stop_watch() { [ -z "${WATCHER:-}" ] || { kill "$WATCHER" 2>/dev/null; wait "$WATCHER" 2>/dev/null || true; WATCHER=""; }; }
trap 'stop_watch; rm -rf "$OUT"' EXIT

shardkit() {  # program backend
  local program=$1 backend=$2
  echo "== $program: shardkit-train --distributed_backend=$backend ($NPROC process(es), $DTYPE)"
  watch_memory "$OUT/$program.mem"
  local precision=()
  [ "$DTYPE" = bf16 ] && precision=(--accelerator.mixed_precision=bf16)
  if ! "$BUILD/bin/shardkit-run" --master-port=0 --nproc-per-node="$NPROC" "$BUILD/bin/shardkit-train" \
      --output_dir="$OUT/$program" --policy.device="$DEVICE" --distributed_backend="$backend" "${precision[@]}" \
      --policy.type=llama --policy.vocab_size="$VOCAB" --policy.hidden_size="$HIDDEN" \
      --policy.intermediate_size="$FFN" --policy.num_hidden_layers="$LAYERS" --policy.num_attention_heads="$HEADS" \
      --policy.num_key_value_heads="$KV_HEADS" --policy.max_position_embeddings="$((SEQ > 2048 ? SEQ : 2048))" \
      --policy.tie_word_embeddings=true --plugin_path="$BUILD/tests/fixtures/datasets" \
      --dataset.type=tokens_fixture --dataset.vocab_size="$VOCAB" --dataset.min_len="$SEQ" --dataset.max_len="$SEQ" \
      --dataset.num_samples="$((BATCH * NPROC * (STEPS + WARMUP)))" --batch_size="$BATCH" \
      --steps="$((STEPS + WARMUP))" --log_freq=1 --save_checkpoint=false --optimizer.lr=1e-4 \
      --distributed.check_collectives=false >"$OUT/$program.log" 2>&1; then
    stop_watch
    echo "$program failed:" >&2
    tail -20 "$OUT/$program.log" >&2
    return 1
  fi
  stop_watch
  grep -o "policy llama ([0-9,]* parameters)" "$OUT/$program.log" | head -1 || true
  "$PYTHON" - "$OUT/$program/metrics.jsonl" "$program" "$WARMUP" "$((BATCH * SEQ * NPROC))" \
    "$(cat "$OUT/$program.mem")" <<'PY' | tee -a "$RESULTS"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])][int(sys.argv[3]):]
seconds = sum(r["step_s"] for r in rows)
print(json.dumps({"program": sys.argv[2], "tokens_per_s": int(sys.argv[4]) * len(rows) / seconds,
                  "s_per_step": seconds / len(rows), "peak_smi_mib": int(sys.argv[5]),
                  "last_loss": rows[-1]["loss"]}))
PY
}

peer() {
  echo "== py-fsdp2: transformers LlamaForCausalLM under fully_shard ($NPROC process(es), $DTYPE)"
  watch_memory "$OUT/py-fsdp2.mem"
  local port
  port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  if ! "$PYTHON" -m torch.distributed.run --nproc_per_node="$NPROC" --master_port="$port" \
      "$HERE/torch_fsdp2_llama.py" --device="$DEVICE" --dtype="$DTYPE" --hidden_size="$HIDDEN" \
      --intermediate_size="$FFN" --num_hidden_layers="$LAYERS" --num_attention_heads="$HEADS" \
      --num_key_value_heads="$KV_HEADS" --vocab_size="$VOCAB" --batch_size="$BATCH" --seq_len="$SEQ" \
      --steps="$STEPS" --warmup_steps="$WARMUP" >"$OUT/py-fsdp2.out" 2>"$OUT/py-fsdp2.err"; then
    stop_watch
    echo "py-fsdp2 failed:" >&2
    tail -20 "$OUT/py-fsdp2.err" >&2
    return 1
  fi
  stop_watch
  "$PYTHON" - "$OUT/py-fsdp2.out" "$(cat "$OUT/py-fsdp2.mem")" <<'PY' | tee -a "$RESULTS"
import json, sys
row = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
row["peak_smi_mib"] = int(sys.argv[2])
print(json.dumps(row))
PY
}

failed=0
shardkit sk-ddp ddp || failed=1
shardkit sk-fsdp fsdp || failed=1
peer || failed=1

# Model FLOPs per token: 6 x parameters (the tied output layer counted once, as it computes once)
# + 12 x layers x hidden x sequence for attention's scores and sums (PaLM's MFU), forward and backward.
"$PYTHON" - "$RESULTS" "$HIDDEN" "$FFN" "$LAYERS" "$HEADS" "$KV_HEADS" "$VOCAB" "$SEQ" "${PEAK_TFLOPS:-0}" \
  "$NPROC" "$gpu_name" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
h, ffn, layers, heads, kv, vocab, seq = (int(x) for x in sys.argv[2:9])
peak, nproc, gpu = float(sys.argv[9]), int(sys.argv[10]), sys.argv[11]
head_dim = h // heads
per_layer = h * heads * head_dim * 2 + h * kv * head_dim * 2 + 3 * h * ffn + 2 * h
params = vocab * h + layers * per_layer + h
flops_per_token = 6 * params + 12 * layers * h * seq
print(f"\nLlama {params / 1e6:,.1f} M parameters, sequence {seq}, {nproc} GPU(s) {gpu}; "
      f"{flops_per_token / 1e9:.1f} GFLOP per token; bf16 peak {peak:g} TFLOPS per GPU\n")
print("| program | tokens/s | s/step | MFU | peak GPU memory (nvidia-smi) | last loss |")
print("|---|---|---|---|---|---|")
for r in rows:
    mfu = f"{100 * r['tokens_per_s'] * flops_per_token / (peak * 1e12 * nproc):.1f} %" if peak else "-"
    print(f"| {r['program']} | {r['tokens_per_s']:.0f} | {r['s_per_step']:.3f} | {mfu} | "
          f"{r['peak_smi_mib'] / 1024:.1f} GiB | {r['last_loss']:.3f} |")
fsdp = {r["program"]: r["tokens_per_s"] for r in rows}
if "sk-fsdp" in fsdp and "py-fsdp2" in fsdp:
    print(f"\nshardkit fsdp / PyTorch FSDP2 tokens/s: {fsdp['sk-fsdp'] / fsdp['py-fsdp2']:.2f}")
PY
exit $failed
