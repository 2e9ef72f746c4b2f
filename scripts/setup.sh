#!/usr/bin/env bash
# Installs what shardkit needs on Debian 12 (only what is missing), then configures and builds it.
# Usage: scripts/setup.sh [build-dir]   (default: build)
#
# LibTorch is the one inside PyPI's torch==2.15.0 wheel, installed into a virtual environment
# kept outside the clone (SHARDKIT_VENV, default ${XDG_CACHE_HOME:-~/.cache}/shardkit/venv-torch-2.15.0);
# the same venv holds the Python peers the tests and benchmarks compare with. To build against
# another LibTorch 2.15.0 (e.g. the CPU-only libtorch archive), set SHARDKIT_TORCH_DIR to the
# folder holding its share/cmake/Torch (see docs/building.md).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
TORCH_PIN=2.15.0
# The Python peers: PyTorch's DDP/DCP/torchrun come with torch; the rest by name. pyarrow also
# brings the Arrow/Parquet C++ SDK the lerobot dataset plugin links (Debian 12 packages none); its
# library names carry the major version (libarrow.so.2600), so it is pinned.
PYARROW_PIN=26.0.1
# transformers, peft and tokenizers are the language-model peers (llama, LoRA, tokenizer.json);
# tensorboard reads back the event files of the tensorboard logger; accelerate's launcher starts
# shardkit-train as LeRobot's guide does (pinned: its launch flags are what the tests exercise);
# diffusers' EMAModel loads the ema_state.pt of --ema.enable runs, as LeRobot main does (pinned: its
# state_dict keys and load_state_dict checks are what the file is written for).
# trl is the chat fine-tuning peer: the text dataset's conversations are checked token for token
# against its SFTTrainer. Every version, the peers' own dependencies included, is pinned by
# scripts/python-constraints.txt.
ACCELERATE_PIN=1.16.0
DIFFUSERS_PIN=0.42.1
TRL_PIN=1.16.0
PYTHON_PEERS=(safetensors numpy "pyarrow==$PYARROW_PIN" transformers peft tokenizers tensorboard
              "accelerate==$ACCELERATE_PIN" "diffusers==$DIFFUSERS_PIN" "trl==$TRL_PIN" pytest)
CONSTRAINTS=scripts/python-constraints.txt

DEBIAN_PACKAGES=(cmake ninja-build g++ ccache pkg-config libgloo-dev libboost1.81-dev
  libboost-json1.81-dev libtomlplusplus-dev libspdlog-dev catch2 python3 python3-venv libsqlite3-dev
  python3-pip iproute2 libxxhash-dev
  libpcre2-dev                      # tokenizer.json pre-tokenizer regexes (\p{L}, lookahead)
  libutf8proc-dev                   # tokenizer.json normalizers (NFC, NFKC, lowercase)
  libprotobuf-dev protobuf-compiler # TensorBoard event records
  libyaml-cpp-dev                   # YAML configuration files
  libavformat-dev libavcodec-dev libavutil-dev libswscale-dev)  # FFmpeg: LeRobot videos and images
missing=()
for p in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The venv: created once, checked every time (never build against a torch other than the pin).
VENV=${SHARDKIT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkit/venv-torch-$TORCH_PIN}
if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] creating the Python venv $VENV"
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"
found=$("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none)
if [ "${found%%+*}" != "$TORCH_PIN" ]; then
  if [ "$found" = none ]; then
    echo "[setup] installing torch==$TORCH_PIN into $VENV (about 5 GB, a minute or two)"
  else
    echo "[setup] $VENV has torch $found, not the pinned $TORCH_PIN: installing torch==$TORCH_PIN"
  fi
  "$PY" -m pip install -q -c "$CONSTRAINTS" "torch==$TORCH_PIN"
  found=$("$PY" -c 'import torch; print(torch.__version__)')
  if [ "${found%%+*}" != "$TORCH_PIN" ]; then
    echo "[setup] error: $VENV still has torch $found after installing torch==$TORCH_PIN" >&2
    exit 1
  fi
fi
# Each peer must be there at its pinned version (a venv made before a pin changed is brought up to it).
if ! "$PY" - "$CONSTRAINTS" "${PYTHON_PEERS[@]}" <<'PYEOF' 2>/dev/null; then
import importlib.metadata as m, re, sys
pins = dict(l.strip().split("==") for l in open(sys.argv[1]) if "==" in l)
names = [re.split("[=<>]", p)[0] for p in sys.argv[2:]]
assert all(m.version(n) == pins[n] for n in names)
PYEOF
  echo "[setup] installing the Python peers into $VENV: ${PYTHON_PEERS[*]} (versions: $CONSTRAINTS)"
  "$PY" -m pip install -q -c "$CONSTRAINTS" "${PYTHON_PEERS[@]}"
fi

# trackio, the tracker LeRobot's --trackio.enable records runs for: the trackio logger's tests read
# runs back through trackio's own Python API. Its own venv keeps its dependencies (gradio-client,
# starlette, ...) out of the torch venv.
TRACKIO_PIN=0.43.0
TRACKIO_VENV=${SHARDKIT_TRACKIO_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkit/venv-trackio-$TRACKIO_PIN}
if ! "$TRACKIO_VENV/bin/python" -c "import trackio, importlib.metadata as m; assert m.version('trackio') == '$TRACKIO_PIN'" 2>/dev/null; then
  echo "[setup] installing trackio==$TRACKIO_PIN into $TRACKIO_VENV"
  python3 -m venv "$TRACKIO_VENV"
  "$TRACKIO_VENV/bin/pip" install -q -c scripts/trackio-constraints.txt "trackio==$TRACKIO_PIN"
fi

if [ -n "${SHARDKIT_TORCH_DIR:-}" ]; then
  TORCH_CMAKE_DIR="$SHARDKIT_TORCH_DIR/share/cmake/Torch"
else
  TORCH_CMAKE_DIR="$("$PY" -c 'import os, torch; print(os.path.dirname(torch.__file__))')/share/cmake/Torch"
  # The wheel is a CUDA build: its CMake config looks for the CUDA toolkit even for CPU code.
  if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
  if ! command -v nvcc >/dev/null; then
    echo "[setup] error: the torch wheel's CMake config needs the CUDA toolkit (nvcc) even for a" \
         "CPU build, and none was found; install it, or set SHARDKIT_TORCH_DIR to a CPU-only" \
         "LibTorch $TORCH_PIN (see docs/building.md)" >&2
    exit 1
  fi
  # No GPU to probe here: name an architecture (nvcc 13 starts at sm_75).
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
fi

# A build folder configured against another LibTorch (an older checkout used Debian's 1.13)
# keeps that LibTorch's library paths in its cache: start it afresh.
if [ -f "$BUILD_DIR/CMakeCache.txt" ] &&
   ! grep -qx "Torch_DIR:[A-Z]*=$TORCH_CMAKE_DIR" "$BUILD_DIR/CMakeCache.txt"; then
  echo "[setup] $BUILD_DIR was configured against another LibTorch" \
       "($(sed -n 's/^Torch_DIR:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")); reconfiguring it from scratch"
  rm -rf "$BUILD_DIR/CMakeCache.txt" "$BUILD_DIR/CMakeFiles"
fi

export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
JOBS=${SHARDKIT_JOBS:-2}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTorch_DIR="$TORCH_CMAKE_DIR" -DSHARDKIT_PYTHON="$PY"
fi
echo "[setup] building in $BUILD_DIR with $JOBS jobs"
# SHARDKIT_BUILD_TARGETS (space-separated) builds only those, e.g. for scripts/device-check.sh.
cmake --build "$BUILD_DIR" -j "$JOBS" ${SHARDKIT_BUILD_TARGETS:+--target $SHARDKIT_BUILD_TARGETS}
