#!/usr/bin/env bash
# The teacher's dashboard (`analog-remote web --teacher-key-file`, /teacher) end to end in a real
# headless Chromium at 1280 × 800, on loopback: 31 receivers (30 with a teacher key, 4 of them on
# traced simulated boards; 1 without), 7 drivers, login, every tile on one screen in natural order,
# true counts, Stop/Release/Identify/Kick/Lock, a silent driver, a SIGKILLed receiver that stays
# OFFLINE until dismissed, the roster on the phone page, a round of the button game. Called by
# `run.sh test`.
#   scripts/teacher-dashboard-test.sh [--screenshot docs/teacher-dashboard.png]
# Needs the debug build (swift build) and Debian's chromium (scripts/setup.sh installs it).
# Last line: `teacher-dashboard: N passed, M failed`, or `teacher-dashboard: SKIPPED: why`.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${ANALOG_REMOTE:-.build/debug/analog-remote}
if [[ ! -x $bin ]]; then
  echo "teacher-dashboard: 0 passed, 1 failed ($bin is not built: run swift build first)"
  exit 1
fi
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
  echo "teacher-dashboard: SKIPPED: chromium is not installed (scripts/setup.sh installs it)"
  exit 0
fi
timeout --kill-after=10 300 python3 scripts/teacher_dashboard_test.py "$bin" "$@"
rc=$?
if [[ $rc == 124 || $rc == 137 ]]; then
  echo "teacher-dashboard: 0 passed, 1 failed (timed out after 300 s)"
fi
exit $rc
