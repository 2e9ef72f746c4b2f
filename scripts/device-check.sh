#!/usr/bin/env bash
# The GPU check, for a machine with one NVIDIA GPU: set-up, a build of only what it runs, then
#   (a) the GPU test suite (nccl comm plugin on a one-rank communicator, CUDA training maths, fsdp's
#       CPU offload against fsdp on the GPU),
#   (b) the default policy trained on cuda:0 against the same run on the CPU (loss curves within
#       a stated fp32 tolerance),
#   (c) bf16 mixed precision on cuda:0 against the fp32 CPU run (loss curves within a stated bf16
#       tolerance),
#   (d) training throughput on the GPU and the CPU, in samples/s,
#   (e) bench/gpu/run_gpu_benchmark.sh: a 1.24 B-parameter Llama in bf16 under shardkit's ddp and
#       fsdp and PyTorch FSDP2 (tokens/s, MFU, peak memory; BENCH=0 skips it).
# One summary line per check; everything goes to $RESULTS too. Exit status 0 only when no check
# failed. Two NCCL ranks cannot share one GPU, so multi-rank NCCL is not run here.
#
# Set-up needs the network the first time (Debian packages, the torch wheel) unless SHARDKIT_VENV
# names a venv that already holds torch 2.15.0.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-gpu}
RESULTS=${RESULTS:-$BUILD_DIR/device-check-results.txt}
STEPS=${STEPS:-200}
# fp32 on a GPU sums in another order than the CPU: the curves drift apart by rounding only.
LOSS_RTOL=${LOSS_RTOL:-2e-3}
# bf16 keeps 8 bits of mantissa: each step's loss within a few per cent of fp32's.
BF16_LOSS_RTOL=${BF16_LOSS_RTOL:-5e-2}
export SHARDKIT_JOBS=${SHARDKIT_JOBS:-$(nproc)}
export SHARDKIT_BUILD_TARGETS="shardkit-train shardkit-env test_gpu shardkit-comm-nccl shardkit-comm-gloo \
shardkit-policy-mlp shardkit-dataset-synthetic shardkit-backend-single shardkit-backend-fsdp \
shardkit-checkpoint_format-safetensors shardkit-run shardkit-backend-ddp shardkit-policy-llama \
shardkit-dataset-tokens_fixture"

PY=${SHARDKIT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkit/venv-torch-2.15.0}/bin/python
start=$(date +%s)
failed=0
mkdir -p "$BUILD_DIR"
: >"$RESULTS"
say() { echo "[device-check] $*" | tee -a "$RESULTS"; }

if ! scripts/setup.sh "$BUILD_DIR" >"$BUILD_DIR/device-check-setup.log" 2>&1; then
  say "setup/build: FAIL (see $BUILD_DIR/device-check-setup.log)"
  tail -30 "$BUILD_DIR/device-check-setup.log"
  exit 1
fi
say "setup/build: ok in $(($(date +%s) - start)) s"
"$BUILD_DIR/bin/shardkit-env" | sed -n '1,12p' >>"$RESULTS"

# (a) The GPU suite (exits 77 when it finds no CUDA device).
"$BUILD_DIR/bin/test_gpu" >"$BUILD_DIR/device-check-gpu-tests.log" 2>&1
rc=$?
case $rc in
  0) say "(a) GPU tests: ok ($(grep -o 'All tests passed.*' "$BUILD_DIR/device-check-gpu-tests.log"))" ;;
  77) say "(a) GPU tests: SKIPPED ($(head -1 "$BUILD_DIR/device-check-gpu-tests.log"))"; failed=1 ;;
  *) say "(a) GPU tests: FAIL (exit $rc, see $BUILD_DIR/device-check-gpu-tests.log)"; failed=1 ;;
esac

# (b) and (d): the same run on cuda:0 and on the CPU.
train() {  # device output_dir [option...]
  local device=$1 dir=$2
  shift 2
  "$BUILD_DIR/bin/shardkit-train" --policy.device="$device" --steps="$STEPS" --batch_size=64 \
    --log_freq=10 --save_freq="$STEPS" --seed=7 --output_dir="$dir" "$@" >"$dir.log" 2>&1
}
runs="$BUILD_DIR/device-check-runs"
rm -rf "$runs" && mkdir -p "$runs"
if train cuda "$runs/cuda" && train cpu "$runs/cpu"; then
  compare=$("$PY" - "$runs/cuda/metrics.jsonl" "$runs/cpu/metrics.jsonl" "$LOSS_RTOL" <<'PY'
import json, sys
gpu = [json.loads(l) for l in open(sys.argv[1])]
cpu = [json.loads(l) for l in open(sys.argv[2])]
rtol = float(sys.argv[3])
assert len(gpu) == len(cpu) and gpu, "different numbers of log lines"
worst = max(abs(g["loss"] - c["loss"]) / abs(c["loss"]) for g, c in zip(gpu, cpu))
rate = lambda rows: sum(r["samples_per_s"] for r in rows[1:]) / max(1, len(rows) - 1)
print(f"{'ok' if worst <= rtol else 'FAIL'} worst relative loss difference {worst:.2e} "
      f"(tolerance {rtol:g}) over {len(gpu)} log steps; "
      f"throughput cuda {rate(gpu):.0f} samples/s, cpu {rate(cpu):.0f} samples/s")
PY
  ) || compare="FAIL comparing the runs"
  say "(b) cuda vs cpu loss curve: ${compare%%;*}"
  say "(d) throughput: ${compare#*; }"
  [[ $compare == ok* ]] || failed=1
else
  say "(b) cuda vs cpu loss curve: FAIL (a run failed: see $runs/*.log)"
  tail -5 "$runs"/*.log
  failed=1
fi

# (c) bf16 on cuda:0 against the fp32 CPU run of (b).
if [ -f "$runs/cpu/metrics.jsonl" ] && train cuda "$runs/cuda-bf16" --accelerator.mixed_precision=bf16; then
  compare=$("$PY" - "$runs/cuda-bf16/metrics.jsonl" "$runs/cpu/metrics.jsonl" "$BF16_LOSS_RTOL" <<'PY'
import json, math, sys
bf16 = [json.loads(l) for l in open(sys.argv[1])]
fp32 = [json.loads(l) for l in open(sys.argv[2])]
rtol = float(sys.argv[3])
assert len(bf16) == len(fp32) and bf16, "different numbers of log lines"
assert all(math.isfinite(r["loss"]) for r in bf16), "a bf16 loss is not finite"
worst = max(abs(b["loss"] - f["loss"]) / abs(f["loss"]) for b, f in zip(bf16, fp32))
print(f"{'ok' if worst <= rtol else 'FAIL'} worst relative loss difference to fp32 on the CPU {worst:.2e} "
      f"(tolerance {rtol:g}) over {len(bf16)} log steps")
PY
  ) || compare="FAIL comparing the runs"
  say "(c) bf16 on cuda vs fp32 on cpu: $compare"
  [[ $compare == ok* ]] || failed=1
else
  say "(c) bf16 on cuda vs fp32 on cpu: FAIL (a run failed: see $runs/*.log)"
  failed=1
fi

# (e) The 1 B Llama benchmark against PyTorch FSDP2 (its table goes to the results).
if [ "${BENCH:-1}" = 1 ]; then
  if SHARDKIT_PYTHON="$PY" bench/gpu/run_gpu_benchmark.sh "$BUILD_DIR" >"$BUILD_DIR/device-check-bench.log" 2>&1; then
    say "(e) Llama bf16 benchmark: ok"
  else
    say "(e) Llama bf16 benchmark: FAIL (see $BUILD_DIR/device-check-bench.log)"
    failed=1
  fi
  grep -E "^\||^Llama|^shardkit fsdp" "$BUILD_DIR/device-check-bench.log" | tee -a "$RESULTS"
fi

say "total: $(($(date +%s) - start)) s, $([ $failed = 0 ] && echo 'all checks passed' || echo 'some checks failed or were skipped')"
exit $failed
