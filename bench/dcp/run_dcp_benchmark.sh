#!/usr/bin/env bash
# DCP checkpoint I/O benchmark: shardkit's save_folder / FolderReader vs PyTorch's dcp.save / dcp.load; prints a markdown report.
#
# Usage: bench/dcp/run_dcp_benchmark.sh [BUILD_DIR]     (default: build, relative to the source tree)
#
# The state: NUM_TENSORS float32 tensors of [rows, 1024], SIZE_MB in all, the same values on both
# sides. Each round runs, for shardkit (bench_dcp_io, dcp_bench.cpp) and PyTorch
# (torch_dcp_bench.py), the order alternating between rounds:
#   save-load   one process: REPS saves (fresh folders), REPS loads into preallocated tensors;
#               shardkit's run also times two page-cache floors on its folder: read() through a
#               1 MiB buffer (what `cat` does) and pread into one buffer of the folder's size
#   save-rank   NPROC processes (shardkit-run + Gloo / torch.distributed.run + Gloo), each saving
#               its dim-0 slice of every tensor (PyTorch: a Shard(0) DTensor), REPS times
#   reshard     one process loading that NPROC-rank folder whole, REPS times
# Once, after the first round, the interop checks: each side loads the other's 1-rank and
# NPROC-rank folders (the run stops there if any value differs). Every load on either side is
# compared element for element with the values saved. Medians of REPS per round, then medians
# of the per-round figures and ratios; summarize_dcp.py writes the report.
# Raw JSON lines and results.md go to RESULTS_DIR (default BUILD_DIR/bench-results/dcp-<date-time>);
# the checkpoints go to CKPT_DIR (default a new folder under /tmp when /tmp is on a disk, else
# under BUILD_DIR) and are removed at the end. About 2.5 minutes on 2 cores with the defaults.
#
# Needs: a configured tree (scripts/setup.sh), and a Python with PyTorch whose torch.distributed
# has Gloo (TORCH_PYTHON, default the venv scripts/setup.sh made: PyTorch 2.15.0, the same wheel
# as shardkit's LibTorch).
# Knobs (environment): ROUNDS (3), REPS (5), SIZE_MB (256), NUM_TENSORS (8), NPROC (2),
# BUILD_FIRST (1: build bench_dcp_io, shardkit-run and the plugins first), JOBS (2), RESULTS_DIR,
# CKPT_DIR, TORCH_PYTHON.
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-build}"
[[ "$BUILD" = /* ]] || BUILD="$SRC/$BUILD"
ROUNDS="${ROUNDS:-3}"
REPS="${REPS:-5}"
SIZE_MB="${SIZE_MB:-256}"
NUM_TENSORS="${NUM_TENSORS:-8}"
NPROC="${NPROC:-2}"
BUILD_FIRST="${BUILD_FIRST:-1}"
JOBS="${JOBS:-2}"
TORCH_PYTHON="${TORCH_PYTHON:-${SHARDKIT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkit/venv-torch-2.15.0}/bin/python}"

die() { echo "run_dcp_benchmark.sh: $*" >&2; exit 1; }
"$TORCH_PYTHON" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
  die "$TORCH_PYTHON cannot import torch with Gloo; set TORCH_PYTHON to a Python with PyTorch (scripts/setup.sh makes the venv with torch 2.15.0)"
((ROUNDS >= 1 && REPS >= 1 && NPROC >= 2)) || die "need ROUNDS >= 1, REPS >= 1, NPROC >= 2 (got $ROUNDS, $REPS, $NPROC)"

if [[ "$BUILD_FIRST" = 1 ]]; then
  [[ -f "$BUILD/CMakeCache.txt" ]] ||
    SHARDKIT_BUILD_TARGETS="bench_dcp_io shardkit_all_apps_and_plugins" "$SRC/scripts/setup.sh" "$BUILD" >&2
  cmake --build "$BUILD" --target bench_dcp_io shardkit_all_apps_and_plugins -j"$JOBS" >&2
fi
BIN="$BUILD/bin"
for exe in bench_dcp_io shardkit-run; do
  [[ -x "$BIN/$exe" ]] || die "$BIN/$exe is missing; build the tree (or run with BUILD_FIRST=1)"
done

# Checkpoints on a disk, never on tmpfs (a RAM-backed save would measure memcpy, not a file system).
if [[ -z "${CKPT_DIR:-}" ]]; then
  if [[ "$(stat -f -c %T /tmp)" != tmpfs ]]; then CKPT_DIR="$(mktemp -d /tmp/shardkit-dcp-bench.XXXXXX)"
  else mkdir -p "$BUILD/dcp-bench-ckpt" && CKPT_DIR="$(mktemp -d "$BUILD/dcp-bench-ckpt/run.XXXXXX")"; fi
fi
mkdir -p "$CKPT_DIR"
[[ "$(stat -f -c %T "$CKPT_DIR")" != tmpfs ]] || die "CKPT_DIR=$CKPT_DIR is on tmpfs; point it at a disk"
trap 'rm -rf "$CKPT_DIR"/sk1 "$CKPT_DIR"/sk2 "$CKPT_DIR"/py1 "$CKPT_DIR"/py2; rmdir "$CKPT_DIR" 2>/dev/null || true' EXIT

# One intra-op thread on both sides (the copies and checks must not differ by thread count).
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

OUT="${RESULTS_DIR:-$BUILD/bench-results/dcp-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT/raw" "$OUT/logs"
free_port() { "$TORCH_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
SIZE_ARGS=(--size_mb="$SIZE_MB" --num_tensors="$NUM_TENSORS")

cat > "$OUT/meta.json" <<EOF
{"cpu": "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)",
 "cores": $(getconf _NPROCESSORS_ONLN), "load_before": "$(cut -d' ' -f1-3 /proc/loadavg)",
 "ckpt_fs": "$(stat -f -c %T "$CKPT_DIR")",
 "python_torch": "$("$TORCH_PYTHON" -c 'import torch; print(torch.__version__)')",
 "date": "$(date -u +%Y-%m-%dT%H:%MZ)", "rounds": $ROUNDS, "reps": $REPS, "size_mb": $SIZE_MB,
 "num_tensors": $NUM_TENSORS, "nproc": $NPROC}
EOF

# step NAME LOG COMMAND...: runs one step, its output in logs/LOG; a failure stops the benchmark
# with the end of that output.
step() {
  local name="$1" log="$OUT/logs/$2"; shift 2
  echo "   $name" >&2
  if ! "$@" > "$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "$name failed (command: $*); full output in $log"
  fi
}

run_shardkit() {  # round
  local raw="$OUT/raw/r$1.jsonl"
  step "shardkit save-load" "sk-save-load.r$1.log" "$BIN/bench_dcp_io" save-load --dir="$CKPT_DIR/sk1" \
    --reps="$REPS" "${SIZE_ARGS[@]}" --out="$raw"
  step "shardkit save-rank x$NPROC" "sk-save-rank.r$1.log" "$BIN/shardkit-run" --nproc-per-node="$NPROC" \
    --master-port=0 "$BIN/bench_dcp_io" save-rank --dir="$CKPT_DIR/sk2" --op=save_ranks --reps="$REPS" \
    "${SIZE_ARGS[@]}" --out="$raw"
  step "shardkit reshard load" "sk-reshard.r$1.log" "$BIN/bench_dcp_io" load --dir="$CKPT_DIR/sk2/ckpt" \
    --op=reshard_load --reps="$REPS" "${SIZE_ARGS[@]}" --out="$raw"
}

run_pytorch() {  # round
  local raw="$OUT/raw/r$1.jsonl" py="$SRC/bench/dcp/torch_dcp_bench.py"
  step "pytorch save-load" "py-save-load.r$1.log" "$TORCH_PYTHON" "$py" save-load --dir="$CKPT_DIR/py1" \
    --reps="$REPS" "${SIZE_ARGS[@]}" --out="$raw"
  step "pytorch save-rank x$NPROC" "py-save-rank.r$1.log" "$TORCH_PYTHON" -m torch.distributed.run \
    --nproc_per_node="$NPROC" --master_port="$(free_port)" "$py" save-rank --dir="$CKPT_DIR/py2" \
    --op=save_ranks --reps="$REPS" "${SIZE_ARGS[@]}" --out="$raw"
  step "pytorch reshard load" "py-reshard.r$1.log" "$TORCH_PYTHON" "$py" load --dir="$CKPT_DIR/py2/ckpt" \
    --op=reshard_load --reps="$REPS" "${SIZE_ARGS[@]}" --out="$raw"
}

# The interop checks: each program loads the other's folders and compares every value.
interop() {
  local raw="$OUT/raw/interop.jsonl" py="$SRC/bench/dcp/torch_dcp_bench.py"
  step "pytorch loads shardkit's 1-rank folder" interop-py-sk1.log "$TORCH_PYTHON" "$py" load \
    --dir="$CKPT_DIR/sk1/ckpt" --op=interop_from_shardkit_1rank --reps=1 "${SIZE_ARGS[@]}" --out="$raw"
  step "pytorch loads shardkit's $NPROC-rank folder" interop-py-sk2.log "$TORCH_PYTHON" "$py" load \
    --dir="$CKPT_DIR/sk2/ckpt" --op=interop_from_shardkit_${NPROC}rank --reps=1 "${SIZE_ARGS[@]}" --out="$raw"
  step "shardkit loads pytorch's 1-rank folder" interop-sk-py1.log "$BIN/bench_dcp_io" load \
    --dir="$CKPT_DIR/py1/ckpt" --op=interop_from_pytorch_1rank --reps=1 "${SIZE_ARGS[@]}" --out="$raw"
  step "shardkit loads pytorch's $NPROC-rank folder" interop-sk-py2.log "$BIN/bench_dcp_io" load \
    --dir="$CKPT_DIR/py2/ckpt" --op=interop_from_pytorch_${NPROC}rank --reps=1 "${SIZE_ARGS[@]}" --out="$raw"
}

echo "== checkpoints in $CKPT_DIR ($(stat -f -c %T "$CKPT_DIR")), results in $OUT" >&2
for ((round = 1; round <= ROUNDS; round++)); do
  echo "== round $round of $ROUNDS" >&2
  if ((round % 2)); then run_shardkit "$round"; run_pytorch "$round"
  else run_pytorch "$round"; run_shardkit "$round"; fi
  if ((round == 1)); then echo "== interop (both directions, values checked)" >&2; interop; fi
done

sed -i "s|\"load_before\"|\"load_after\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"load_before\"|" "$OUT/meta.json"
"$TORCH_PYTHON" "$SRC/bench/dcp/summarize_dcp.py" "$OUT"
echo "(written to $OUT/results.md)" >&2
