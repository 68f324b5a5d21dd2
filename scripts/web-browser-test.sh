#!/usr/bin/env bash
# The phone page (`analog-remote web`) end to end in a real headless Chromium: HTTPS, robot picker,
# device orientation and touch through the DevTools protocol, the exact W writes on two simulated
# boards, five phone viewports, rotation, neutral within 100 ms of hiding the page, foreign
# origins and bad clients, no console error. Called by `run.sh test`.
#   scripts/web-browser-test.sh [--screenshot docs/phone-page.png] [--screenshots docs]
# Needs the debug build (swift build) and Debian's chromium (scripts/setup.sh installs it).
# Last line: `web-browser: N passed, M failed`, or `web-browser: SKIPPED: why` when chromium cannot run.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${ANALOG_REMOTE:-.build/debug/analog-remote}
if [[ ! -x $bin ]]; then
  echo "web-browser: 0 passed, 1 failed ($bin is not built: run swift build first)"
  exit 1
fi
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
  echo "web-browser: SKIPPED: chromium is not installed (scripts/setup.sh installs it)"
  exit 0
fi
probe=$(mktemp -d -t ar-chromium-probe.XXXXXX)
if ! timeout 60 "$browser" --headless=new --no-sandbox --disable-gpu --user-data-dir="$probe" --dump-dom about:blank >/dev/null 2>&1; then
  rm -rf "$probe"
  echo "web-browser: SKIPPED: chromium is installed but cannot start headless here"
  exit 0
fi
rm -rf "$probe"
timeout --kill-after=10 300 python3 scripts/web_browser_test.py "$bin" "$@"
rc=$?
if [[ $rc == 124 || $rc == 137 ]]; then
  echo "web-browser: 0 passed, 1 failed (timed out after 300 s)"
fi
exit $rc
