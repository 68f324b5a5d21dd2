#!/usr/bin/env bash
# stamp-run.sh OUT [GO] -- CMD... — run CMD with every line of its stdout and stderr written to OUT
# prefixed with the wall-clock time (`1732390000.123456 line`, bash's $EPOCHREALTIME: no fork per
# line). With GO (a FIFO) it first opens the FIFO, marks itself ready (OUT.ready exists), and
# waits until the writer closes it: the caller opens the FIFO for writing, waits until every
# process is ready, then closes it, and they all start at once (classroom-test.sh's barrier).
#
# CMD replaces this shell (exec), so the pid the caller recorded is CMD's own and a SIGTERM to it
# reaches CMD directly; the time-stamper ends when CMD's output closes.
set -u
out=$1; shift
go=""
if [ "$1" != "--" ]; then go=$1; shift; fi
shift   # --
exec > >(while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done > "$out") 2>&1
if [ -n "$go" ]; then
    exec 8<"$go"            # returns once the caller holds the write end open
    : > "$out.ready"
    read -r _ <&8 || true   # end of file: the caller closed it
    exec 8<&-
fi
exec "$@"
