#!/usr/bin/env bash
# Durable save speed of a safetensors file: shardkit's writer against Python safetensors
# (save_file + os.fsync) and against the disk's own limit for the same bytes (dd with
# conv=fdatasync), in alternating rounds. Prints a markdown table: medians over rounds, the
# spread, and the ratios of speed (higher is better for shardkit).
#
# Usage: bench/checkpoint/run_save_speed_benchmark.sh [BUILD_DIR]   (default: build)
#
# The state: bench_safetensors_io's (NUM_TENSORS float32 tensors of NUMEL elements plus a few odd
# dtypes; 64 x 4 Mi: 1.075 GB). Per round, in an order that rotates each round: shardkit
# (bench_safetensors_io --save_only: write_file, which writes, fsyncs, renames and fsyncs the
# folder), Python (safetensors_io.py --save_only: save_file of the same tensors, read from
# shardkit's file, then os.fsync), dd (the shardkit file, in the page cache, copied with bs=16M
# conv=fdatasync). Each program times its own save (dd: its own report), so process start and
# building the state are not counted. Before each save the previous files are removed and
# everything is synced, so no save pays for another's write-back. Files go to DIR (default a new
# folder under /tmp; give one on the disk you care about). Knobs: ROUNDS (5), NUM_TENSORS (64),
# NUMEL (4194304), DIR, TORCH_PYTHON (the venv's python), BUILD_FIRST (1: build bench_safetensors_io).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
ROUNDS=${ROUNDS:-5} NUM_TENSORS=${NUM_TENSORS:-64} NUMEL=${NUMEL:-4194304}
VENV=${SHARDKIT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkit/venv-torch-2.15.0}
TORCH_PYTHON=${TORCH_PYTHON:-$VENV/bin/python}
OUT=$(mktemp -d)
if [ -z "${DIR:-}" ]; then DIR=$(mktemp -d); MADE_DIR=1; fi
trap 'rm -rf "$OUT" "$DIR"/bench-*.safetensors*; [ -z "${MADE_DIR:-}" ] || rmdir "$DIR"' EXIT
mkdir -p "$DIR"
[ "${BUILD_FIRST:-1}" = 0 ] || cmake --build "$BUILD" --target bench_safetensors_io -j2 >&2
SRC="$DIR/bench-source.safetensors"

echo "writing the source file ($NUM_TENSORS x $NUMEL float32 and the odd tensors)" >&2
"$BUILD/bin/bench_safetensors_io" --file="$SRC" --reps=1 --num_tensors="$NUM_TENSORS" --numel="$NUMEL" \
  --save_only > /dev/null

fresh() { rm -f "$DIR"/bench-shardkit.safetensors* "$DIR"/bench-python.safetensors "$DIR"/bench-dd.safetensors; sync; }
shardkit() {
  "$BUILD/bin/bench_safetensors_io" --file="$DIR/bench-shardkit.safetensors" --reps=1 \
    --num_tensors="$NUM_TENSORS" --numel="$NUMEL" --save_only |
    python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["seconds"][0])'
}
python_side() {
  "$TORCH_PYTHON" bench/safetensors_io.py --source="$SRC" --file="$DIR/bench-python.safetensors" --reps=1 \
    --save_only | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["seconds"][0])'
}
dd_side() {
  cat "$SRC" > /dev/null  # the source in the page cache: dd measures the writing alone
  LC_ALL=C dd if="$SRC" of="$DIR/bench-dd.safetensors" bs=16M conv=fdatasync 2>&1 |
    awk '/copied/ {for (i = 1; i <= NF; ++i) if ($(i + 1) == "s,") print $i}'
}
sides=(shardkit python_side dd_side)
for round in $(seq "$ROUNDS"); do
  for k in 0 1 2; do
    side=${sides[$(((round + k) % 3))]}
    fresh
    t=$($side)  # a failed save stops the run here (set -e), never an empty time
    [ -n "$t" ] || { echo "$side printed no time in round $round" >&2; exit 1; }
    echo "$round $side $t" >> "$OUT/times"
  done
  echo "round $round of $ROUNDS: $(grep "^$round " "$OUT/times" | cut -d' ' -f2- | tr '\n' ' ')" >&2
done
bytes=$(stat -c %s "$SRC")
python3 - "$OUT/times" "$bytes" "$DIR" <<'PY'
import statistics, sys
times, size, where = sys.argv[1], int(sys.argv[2]), sys.argv[3]
by = {}
for line in open(times):
    r, side, s = line.split()
    by.setdefault(side, {})[int(r)] = float(s)
name = {"shardkit": "shardkit `write_file` (write, fsync, rename, folder fsync)",
        "python_side": "Python `save_file` + `os.fsync`", "dd_side": "`dd bs=16M conv=fdatasync`"}
print(f"{size / 1e9:.3f} GB per save, files in {where}\n")
print("| program | median s | GB/s | rounds (s) |\n|---|---|---|---|")
for side in ("shardkit", "python_side", "dd_side"):
    v = by[side]
    m = statistics.median(v.values())
    print(f"| {name[side]} | {m:.3f} | {size / m / 1e9:.2f} | {', '.join(f'{v[r]:.3f}' for r in sorted(v))} |")
print("\n| ratio of speed | median of rounds | rounds |\n|---|---|---|")
for peer, label in (("python_side", "shardkit / Python + fsync (target >= 1.0)"),
                    ("dd_side", "shardkit / dd conv=fdatasync (target >= 0.8)")):
    ratios = {r: by[peer][r] / by["shardkit"][r] for r in by["shardkit"] if r in by[peer]}
    print(f"| {label} | **{statistics.median(ratios.values()):.2f}** | "
          f"{', '.join(f'{ratios[r]:.2f}' for r in sorted(ratios))} |")
PY
