#!/usr/bin/env bash
# Makes the LeRobot 0.6.1 peer venv the LeRobot interop tests compare with (tests/integration/lerobot_interop).
#
# LeRobot 0.6.1 needs Python >= 3.12 and pins torch < 2.12, so it cannot share the SDK venv: it
# gets its own, kept outside the clone (~/.cache/shardkit/venv-lerobot-0.6.1; SHARDKIT_LEROBOT_VENV
# overrides). Python 3.12 comes from pyenv or the system. Nothing is done when the venv already
# has lerobot 0.6.1. A failed install is reported and exits 0 unless SHARDKIT_LEROBOT_REQUIRED=1:
# the interop tests are then reported as skipped, with this script named.
set -uo pipefail
VENV=${SHARDKIT_LEROBOT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkit/venv-lerobot-0.6.1}
PIN=0.6.1
if "$VENV/bin/python" -c "import lerobot, importlib.metadata as m; assert m.version('lerobot') == '$PIN'" 2>/dev/null; then
  exit 0
fi
fail() {
  echo "[setup-lerobot-peer] $*" >&2
  [ "${SHARDKIT_LEROBOT_REQUIRED:-0}" = 1 ] && exit 1
  exit 0
}
PY312=""
for candidate in "$(command -v pyenv >/dev/null && echo "$(pyenv root)/versions/3.12.1/bin/python")" \
                 "$(command -v python3.12 || true)"; do
  [ -n "$candidate" ] && [ -x "$candidate" ] && { PY312=$candidate; break; }
done
[ -n "$PY312" ] || fail "no Python 3.12 found (pyenv install 3.12.1, or apt-get install python3.12): LeRobot interop tests will be skipped"
echo "[setup-lerobot-peer] installing lerobot==$PIN into $VENV (about 5 GB, a few minutes)"
"$PY312" -m venv "$VENV" || fail "cannot create $VENV"
# Every version pinned (lerobot's dependencies too), so a fresh machine gets the venv CI had.
"$VENV/bin/pip" install -q -c "$(dirname "$0")/lerobot-constraints.txt" "lerobot[dataset]==$PIN" accelerate ||
  fail "pip could not install lerobot==$PIN into $VENV"
