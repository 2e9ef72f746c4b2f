#!/usr/bin/env bash
# Installs what shardkit needs on Debian 12 (only what is missing), then configures and builds it.
# Usage: scripts/setup.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}

DEBIAN_PACKAGES=(cmake ninja-build g++ ccache pkg-config libtorch-dev libgloo-dev libboost1.81-dev
  libboost-json1.81-dev libtomlplusplus-dev libspdlog-dev catch2 python3 python3-pip)
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

# Python is only for interop tests (reading our safetensors with the reference library).
PYTHON=$(command -v python3)
if ! "$PYTHON" -c 'import safetensors, numpy' 2>/dev/null; then
  echo "[setup] installing the Python safetensors reference (interop tests)"
  "$PYTHON" -m pip install -q safetensors numpy 2>/dev/null ||
    "$PYTHON" -m pip install -q --break-system-packages safetensors numpy
fi

export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
JOBS=${SHARDKIT_JOBS:-2}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
echo "[setup] building in $BUILD_DIR with $JOBS jobs"
cmake --build "$BUILD_DIR" -j "$JOBS"
