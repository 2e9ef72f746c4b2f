#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (the README's test command; CI runs it too).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
# LeRobot itself, for the interop tests (skipped, and said so, when it cannot be installed).
scripts/setup-lerobot-peer.sh
# Once the peer is there, a test that still reports it missing fails instead of skipping.
LEROBOT_VENV=${SHARDKIT_LEROBOT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkit/venv-lerobot-0.6.1}
if "$LEROBOT_VENV/bin/python" -c "import lerobot" 2>/dev/null; then
  export SHARDKIT_LEROBOT_REQUIRED=1
fi
scripts/setup.sh "$BUILD_DIR"
cd "$BUILD_DIR"
ctest --output-on-failure -j "${SHARDKIT_TEST_JOBS:-2}" "$@"
