#!/usr/bin/env bash
# The project's two entry points. Both run scripts/setup.sh first (idempotent: installs only the
# Debian packages that are missing), so they work on a fresh machine.
#   ./run.sh demo [ARGS…]   build and run the demo (simulated board: no hardware needed)
#   ./run.sh test           build and run the whole test suite, the Swift API's examples, the fuzzers, then the two-host discovery test,
#                           the phone page in headless Chromium, the classroom test (many hosts, two
#                           sessions), doctor's namespace test, the .deb test in a clean Debian root and
#                           the service under systemd in that root
set -euo pipefail
cd "$(dirname "$0")"
what=${1:-}
shift || true

# The demo needs only the build's libraries; the tests need browsers, namespaces, debootstrap …
if [[ "$what" == demo ]]; then bash scripts/setup.sh --demo; else bash scripts/setup.sh; fi

case "$what" in
  demo)
    swift build --product analog-remote 2>&1 | grep -vE '^(\[|Building|Build complete|Compiling|Write|Fetching|Fetched|Computing|Computed|Creating|Working copy)' || true
    exec .build/debug/analog-remote demo "$@"
    ;;
  test)
    # Each step says how long it took (the whole run must stay well inside CI's limit).
    step() { local started=$SECONDS; "$@"; echo "run.sh: $* took $((SECONDS - started)) s" >&2; }
    # The build must not warn in our own code (Sources/, Tests/, Examples/): on a fresh clone every
    # file compiles, so every warning shows here. A dependency's warnings are not ours to fix.
    build_log=$(mktemp -t analog-remote-build.XXXXXX)
    step bash -c 'swift build --build-tests 2>&1 | tee "$0"; exit "${PIPESTATUS[0]}"' "$build_log"
    if grep -E "^$PWD/(Sources|Tests|Examples)/[^:]+:[0-9]+:[0-9]+: warning:" "$build_log" | sort -u; then
      echo "run.sh: the build warns in our own code (the lines above): fix each warning" >&2
      rm -f "$build_log"
      exit 1
    fi
    rm -f "$build_log"
    # The .deb's static build (package-test.sh's first step, ~5 min of CPU) compiles meanwhile at
    # idle priority (SCHED_IDLE: it runs only on a CPU no test wants, and yields at once), so it
    # fills the time the tests spend waiting on timeouts, browsers and namespaces. package-test.sh
    # then finds it built; if this build failed, package-test.sh's own build shows why.
    prebuild_log=$(mktemp -t analog-remote-prebuild.XXXXXX)
    # Trap: setsid makes a new session, and with the kernel's autogroup scheduling a session is a
    # group that gets an equal share of the CPU, whatever the policy of its tasks (it slowed the
    # examples' and fuzzers' builds by minutes). The build lowers its own group to nice 19 first.
    setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec chrt --idle 0 bash scripts/install.sh --debug --build-only' >"$prebuild_log" 2>&1 &
    prebuild=$!
    # Trap: under set -e a failing command in an EXIT trap becomes the script's exit status (a
    # clean run ended 1 because the build had already finished): every command here must succeed.
    # Trap: a step that fails while the build is stopped (SIGSTOP, below) ends the script with it
    # stopped, and a stopped process acts on SIGTERM only once continued: left so, it holds the
    # build folder's lock and the next run waits on it for ever. TERM, then CONT.
    trap 'kill -TERM -- -"$prebuild" 2>/dev/null || true; kill -CONT -- -"$prebuild" 2>/dev/null || true; rm -f "$prebuild_log"' EXIT
    step swift test --skip-build
    # Record → replay timing at its 5 ms bound needs the machine to itself, and a session's growth
    # under a 900-source flood (< 8 MiB) needs the process to itself: those suites again, one test
    # at a time (~45 s), with the background build stopped (SIGSTOP to its process group).
    kill -STOP -- -"$prebuild" 2>/dev/null || true
    ANALOG_REMOTE_TIMING_TEST=1 ANALOG_REMOTE_FLOOD_RSS=1 step swift test --skip-build --no-parallel \
      --filter 'RecordReplayEndToEndTests|SessionFloodTests'
    kill -CONT -- -"$prebuild" 2>/dev/null || true
    step bash scripts/examples-test.sh    # the AnalogRemoteKit examples built as users' packages and run, ~3 min cold
    step bash scripts/fuzz.sh          # every decoder of outside bytes under libFuzzer + ASan, ~2 min
    if [[ -x scripts/two-host-test.sh ]]; then
      step bash scripts/two-host-test.sh
    fi
    step bash scripts/web-browser-test.sh
    step bash scripts/teacher-dashboard-test.sh   # the teacher's /teacher dashboard (roster, game) in headless Chromium, ~25 s
    step bash scripts/doctor-test.sh        # doctor's checks, in network namespaces of its own
    waited=$SECONDS
    wait "$prebuild" || echo "run.sh: the background build of the .deb failed; package-test.sh builds it again and shows why" >&2
    echo "run.sh: waited $((SECONDS - waited)) s for the background build of the .deb" >&2
    step bash scripts/package-test.sh --systemd   # the .deb in a clean Debian root (debootstrap), then the
                                             # service under a real systemd in that root (systemd-test.sh)
    if [[ -x scripts/classroom-test.sh ]]; then
      step timeout 300 bash scripts/classroom-test.sh
    fi
    ;;
  *)
    echo "usage: ./run.sh demo [ARGS…] | ./run.sh test" >&2
    exit 64
    ;;
esac
