#!/usr/bin/env bash
# stamp-run.sh OUT [GO] -- CMD... — run CMD with every line of its stdout and stderr written to OUT
# prefixed with the wall-clock time (`1732390000.123456 line`, bash's $EPOCHREALTIME: no fork per
# line). With GO (a FIFO) it first waits until the FIFO is opened for writing and closed again:
# many processes started this way all start at once (classroom-test.sh's "all drivers at once").
#
# CMD replaces this shell (exec), so the pid the caller recorded is CMD's own and a SIGTERM to it
# reaches CMD directly; the time-stamper ends when CMD's output closes.
set -u
out=$1; shift
go=""
if [ "$1" != "--" ]; then go=$1; shift; fi
shift   # --
exec > >(while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done > "$out") 2>&1
if [ -n "$go" ]; then read -r _ < "$go" || true; fi
exec "$@"
