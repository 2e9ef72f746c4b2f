#!/bin/sh
# A CTest test that cannot run at all (its executable was not built, its peer is missing) skips here,
# counted like SHARDKIT_SKIP: prints the reason, adds it to $SHARDKIT_SKIP_LOG, exits 77.
# Usage: skip.sh EXECUTABLE-NAME REASON...
name=$1
shift
echo "skipped: $*"
if [ -n "${SHARDKIT_SKIP_LOG:-}" ]; then
  printf '%s\t(every test case)\t%s\n' "$name" "$(printf '%s' "$*" | tr '\t\n' '  ')" >>"$SHARDKIT_SKIP_LOG"
fi
exit 77
