#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (the README's test command; CI runs it too).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
# LeRobot itself, for the interop tests (skipped, and said so, when it cannot be installed).
scripts/setup-lerobot-peer.sh
scripts/setup.sh "$BUILD_DIR"
cd "$BUILD_DIR"
ctest --output-on-failure -j "${SHARDKIT_TEST_JOBS:-2}" "$@"
