#!/usr/bin/env bash
# Tokens/s of shardkit's C++ tokenizer against Python `tokenizers` on the same corpus and threads.
# usage: bench/tokenizer/run_tokenizer_benchmark.sh [BUILD_DIR] [LINES]
# Needs bench_tokenizer built (ninja -C build bench_tokenizer; configure with -DSHARDKIT_BUILD_BENCH=ON)
# and the SDK's venv (scripts/setup.sh). Prints one JSON line per run and the ratio per thread count.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
lines=${2:-100000}
python=${SHARDKIT_PYTHON:-$HOME/.cache/shardkit/venv-torch-2.15.0/bin/python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" "$root/tests/unit/tokenizer/make_tokenizers.py" "$work" "$lines" >/dev/null
for name in gpt2 llama3; do
  for threads in 1 $(nproc); do
    cpp=$("$build/bin/bench_tokenizer" "$work/$name" "$work/corpus.bin" "$threads")
    py=$(RAYON_NUM_THREADS=$threads "$python" "$here/tokenizer_bench.py" "$work/$name" "$work/corpus.bin" "$threads")
    echo "$name $cpp"
    echo "$name $py"
    "$python" -c "import json,sys; c=json.loads(sys.argv[1]); p=json.loads(sys.argv[2]); \
print(f'$name threads=$threads: shardkit {c[\"tokens_per_s\"]:.0f} tokens/s, tokenizers {p[\"tokens_per_s\"]:.0f} tokens/s, ratio {c[\"tokens_per_s\"]/p[\"tokens_per_s\"]:.2f}')" "$cpp" "$py"
  done
done
