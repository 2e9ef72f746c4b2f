#!/usr/bin/env bash
# Sharded-backend benchmark: shardkit fsdp / zero3 vs PyTorch FSDP2, fsdp vs ddp, prefetch on vs off; prints a markdown report.
#
# Usage: bench/fsdp/run_fsdp_benchmark.sh [BUILD_DIR]     (default: build)
#
# Timed in interleaved rounds with hyperfine (one run of each per round, the order rotating):
#   sk-fsdp             shardkit fsdp (defaults: prefetch on, reshard_after_forward on)
#   sk-fsdp-noprefetch  the same with --accelerator.fsdp.prefetch=false
#   sk-zero3            --distributed_backend=zero --accelerator.zero.stage=3
#   sk-ddp              shardkit ddp (the model fits unsharded)
#   py-fsdp2            bench/fsdp/torch_fsdp2_mlp.py: fully_shard per block, then the root
# Throughput is whole-cluster samples/s after WARMUP_STEPS (as bench/ddp). Memory: one MEM_STEPS run
# of each of sk-fsdp, sk-zero1..3, sk-ddp (per-rank "peak CPU tensor memory" line, --log_all_ranks)
# and py-fsdp2 --memory_steps (torch.profiler's CPU allocator events, see that file).
# Knobs: RUNS (3), STEPS (40), WARMUP_STEPS (10), MEM_STEPS (5), HIDDEN_DIM (512), NUM_BLOCKS (8),
# EXPANSION (2), BATCH_SIZE (32), NPROC (2), BUILD_FIRST (1), JOBS (1), RESULTS_DIR, TORCH_PYTHON.
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-build}"
[[ "$BUILD" = /* ]] || BUILD="$SRC/$BUILD"
RUNS="${RUNS:-3}" STEPS="${STEPS:-40}" WARMUP_STEPS="${WARMUP_STEPS:-10}" MEM_STEPS="${MEM_STEPS:-5}"
HIDDEN_DIM="${HIDDEN_DIM:-512}" NUM_BLOCKS="${NUM_BLOCKS:-8}" EXPANSION="${EXPANSION:-2}"
BATCH_SIZE="${BATCH_SIZE:-32}" NPROC="${NPROC:-2}" BUILD_FIRST="${BUILD_FIRST:-1}" JOBS="${JOBS:-1}"
TORCH_PYTHON="${TORCH_PYTHON:-${SHARDKIT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkit/venv-torch-2.15.0}/bin/python}"
STATE_DIM=16
ACTION_DIM=4

die() { echo "run_fsdp_benchmark.sh: $*" >&2; exit 1; }
command -v hyperfine >/dev/null || die "hyperfine is not installed (apt-get install hyperfine)"
"$TORCH_PYTHON" -c 'from torch.distributed.fsdp import fully_shard' 2>/dev/null ||
  die "$TORCH_PYTHON cannot import torch.distributed.fsdp.fully_shard; set TORCH_PYTHON (scripts/setup.sh makes the venv)"
((WARMUP_STEPS >= 1 && STEPS > WARMUP_STEPS)) || die "need 1 <= WARMUP_STEPS < STEPS (got $WARMUP_STEPS, $STEPS)"
if [[ "$BUILD_FIRST" = 1 ]]; then
  cmake --build "$BUILD" --target shardkit_all_apps_and_plugins -j"$JOBS" >&2
fi
BIN="$BUILD/bin"
for exe in shardkit-train shardkit-run; do [[ -x "$BIN/$exe" ]] || die "$BIN/$exe is missing; build the tree"; done
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

OUT="${RESULTS_DIR:-$BUILD/bench-results/fsdp-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT/runs" "$OUT/logs" "$OUT/memory"
free_port() { "$TORCH_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

SK="'$BIN/shardkit-run' --master-port=0 --nproc-per-node=$NPROC '$BIN/shardkit-train' --policy.type=mlp"
SK="$SK --policy.hidden_dim=$HIDDEN_DIM --policy.num_blocks=$NUM_BLOCKS --policy.expansion=$EXPANSION"
SK="$SK --batch_size=$BATCH_SIZE --dataset.state_dim=$STATE_DIM --dataset.action_dim=$ACTION_DIM"
SK="$SK --save_checkpoint=false --num_threads=1 --log_freq=$WARMUP_STEPS --log_all_ranks=true"
declare -A EXTRA=([sk-fsdp]="--distributed_backend=fsdp"
  [sk-fsdp-noprefetch]="--distributed_backend=fsdp --accelerator.fsdp.prefetch=false"
  [sk-zero1]="--distributed_backend=zero --accelerator.zero.stage=1"
  [sk-zero2]="--distributed_backend=zero --accelerator.zero.stage=2"
  [sk-zero3]="--distributed_backend=zero --accelerator.zero.stage=3"
  [sk-zero1-h2]="--distributed_backend=zero --accelerator.zero.stage=1 --accelerator.zero.reduce_bucket_size=$((HIDDEN_DIM * HIDDEN_DIM))"
  [sk-zero2-h2]="--distributed_backend=zero --accelerator.zero.stage=2 --accelerator.zero.reduce_bucket_size=$((HIDDEN_DIM * HIDDEN_DIM))"
  [sk-ddp]="--distributed_backend=ddp")
NAMES=(sk-fsdp sk-fsdp-noprefetch sk-zero3 sk-ddp py-fsdp2)
# -h2: gradient buckets of hidden_dim^2 elements, the reduce_bucket_size Hugging Face accelerate
# gives DeepSpeed for "auto" (shardkit's default at stage 2, auto, cuts buckets of an eighth of the model).
MEM_NAMES=(sk-fsdp sk-zero1 sk-zero2 sk-zero1-h2 sk-zero2-h2 sk-zero3 sk-ddp py-fsdp2)

# command_of NAME TAG PORT STEPS [memory]: the shell command line of one run.
command_of() {
  local name="$1" tag="$2" port="$3" steps="$4" mem="${5:-}"
  case "$name" in
    sk-*) echo "$SK ${EXTRA[$name]} --steps=$steps --output_dir='$OUT/runs/$name.$tag'" ;;
    py-fsdp2)
      local extra="--warmup_steps=$WARMUP_STEPS"
      [[ -z "$mem" ]] || extra="--memory_steps=$steps"
      echo "'$TORCH_PYTHON' -m torch.distributed.run --nproc_per_node=$NPROC --master_port=$port" \
           "'$SRC/bench/fsdp/torch_fsdp2_mlp.py' --hidden_dim=$HIDDEN_DIM --num_blocks=$NUM_BLOCKS" \
           "--expansion=$EXPANSION --batch_size=$BATCH_SIZE --state_dim=$STATE_DIM --action_dim=$ACTION_DIM" \
           "--num_threads=1 --steps=$steps $extra --program=$name --out='$OUT/python.$tag.jsonl'" ;;
  esac
}

cat > "$OUT/meta.json" <<JSON
{"cpu": "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)",
 "cores": $(getconf _NPROCESSORS_ONLN), "load_before": "$(cut -d' ' -f1-3 /proc/loadavg)",
 "python_torch": "$("$TORCH_PYTHON" -c 'import torch; print(torch.__version__)')",
 "date": "$(date -u +%Y-%m-%dT%H:%MZ)", "runs": $RUNS, "steps": $STEPS, "warmup_steps": $WARMUP_STEPS,
 "mem_steps": $MEM_STEPS, "hidden_dim": $HIDDEN_DIM, "num_blocks": $NUM_BLOCKS, "expansion": $EXPANSION,
 "batch_size": $BATCH_SIZE, "nproc": $NPROC, "state_dim": $STATE_DIM, "action_dim": $ACTION_DIM}
JSON
: > "$OUT/commands.txt"

# --- memory runs (also the preflight: a failure shows here, before any timing) ---------------
echo "== memory runs ($MEM_STEPS steps each)" >&2
for name in "${MEM_NAMES[@]}"; do
  cmd="$(command_of "$name" mem "$(free_port)" "$MEM_STEPS" memory)"
  echo "memory $name: $cmd" >> "$OUT/commands.txt"
  bash -c "$cmd" > "$OUT/memory/$name.log" 2>&1 ||
    { tail -n 30 "$OUT/memory/$name.log" >&2; die "$name failed (command: $cmd)"; }
done

# --- timed rounds ---------------------------------------------------------------------------
N=${#NAMES[@]}
for ((round = 1; round <= RUNS; round++)); do
  echo "== round $round of $RUNS" >&2
  args=()
  for ((i = 0; i < N; i++)); do
    name="${NAMES[$(((i + round - 1) % N))]}"
    cmd="$(command_of "$name" "r$round" "$(free_port)" "$STEPS")"
    echo "round $round $name: $cmd" >> "$OUT/commands.txt"
    args+=(-n "$name" "$cmd > '$OUT/logs/$name.r$round.log' 2>&1")
  done
  hyperfine -i --runs 1 --export-json "$OUT/hyperfine.r$round.json" "${args[@]}" >&2
done

sed -i "s|\"load_before\"|\"load_after\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"load_before\"|" "$OUT/meta.json"
status=0
"$TORCH_PYTHON" "$SRC/bench/fsdp/summarize_fsdp.py" "$OUT" || status=$?
echo "(written to $OUT/results.md)" >&2
exit "$status"
