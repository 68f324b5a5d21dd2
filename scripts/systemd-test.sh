#!/usr/bin/env bash
# CI: the analog-remote service under a real systemd, checked as a robot owner would.
#
#   scripts/systemd-test.sh --root DIR      (as root; scripts/package-test.sh --systemd calls it)
#   scripts/systemd-test.sh                 (alone: runs package-test.sh --systemd, which makes the root)
#
# DIR is the clean Debian 12 root package-test.sh made, with the package installed by apt. This
# adds systemd to it and boots it with systemd-nspawn, --private-network (only loopback: no mDNS
# or anything else reaches the machine's network; the config says no-advertise), with /run/board
# bound to a folder of this test. Inside, a simulated board (board-sim --firmware motors --trace,
# a transient unit as the service user) answers on a pseudo-terminal linked at /run/board/link,
# and /etc/analog-remote/receive.toml points the packaged unit at it. Checks, in order:
#   - `systemctl start analog-remote` returns with the port bound and the board probed, and a
#     controller started right after drives at once (its only forward state moves the motors);
#     the time from `systemctl start` to that drivable state is printed;
#   - `systemctl reload` 10 times in a row, the map switched each time: each returns with the
#     unit active and the new speeds in force; a bad config is refused (reload fails, the unit
#     stays active with the running map); all in the same process;
#   - a receiver stalled with SIGSTOP while driving: motors 0 within 1.5 s of the stop (the
#     1 s watchdog's abort), killed by the watchdog and running again within WatchdogSec +
#     RestartSec + 1 s, and the board is written to rest before it drives again; doctor's
#     service line then tells the restart and the watchdog;
#   - a receiver killed with SIGKILL, then one with SIGABRT, while driving: motors 0 within
#     300 ms (ExecStopPost's `analog-remote rest`; for SIGABRT also the receiver's own crash
#     handler), `rest` said "board at rest" in the journal after each death, and the restarted
#     receiver drives again after writing rest first. Each time to motors 0 is printed: from
#     just before the signal is sent to board-sim's stamp (--trace-times) of the first command
#     that left the motors at 0;
#   - the board unplugged while it runs: logged, the same process takes it back (rest first);
#   - `systemctl stop` while driving: motors 0, exit 0;
#   - started without its board: exit 3, restarted again and again (doctor: fail, exit 3) until
#     the board is there, then it drives;
#   - `journalctl -u analog-remote` shows the start, the watchdog's kill and the stop, and no
#     start has libdispatch's thread priority warning (no dispatch source in the receiver).
# Every wait has a deadline. The container is powered off by the nspawn process's pid (then its
# init is killed by pid if it lingers), the one bind mount this script makes is undone at once,
# and the work folder is removed, on every exit path.
# Last line: `systemd: N passed, M failed` (or `SKIPPED: why`).
set -uo pipefail
shopt -s extglob
cd "$(dirname "$0")/.."

root=""
while (($#)); do
  case "$1" in
    --root) root=${2:?--root needs a directory}; shift 2 ;;
    *) echo "systemd-test.sh: unknown argument $1 (use --root DIR, or nothing)" >&2; exit 64 ;;
  esac
done
[[ -n $root ]] || exec bash scripts/package-test.sh --systemd

if [[ $(id -u) -ne 0 ]]; then echo "SKIPPED: the systemd test needs root (systemd-nspawn)"; exit 0; fi
for tool in systemd-nspawn nsenter; do
  command -v "$tool" >/dev/null || { echo "SKIPPED: the systemd test needs $tool (scripts/setup.sh installs systemd-container)"; exit 0; }
done
[[ -x $root/usr/bin/analog-remote ]] || { echo "systemd-test.sh: no installed package in $root" >&2; exit 64; }

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok    $1"; }
fail() { failed=$((failed + 1)); echo "FAIL  $1" >&2; }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
finish() { echo "systemd test took $((SECONDS - started)) s"; echo "systemd: $passed passed, $failed failed"; [[ $failed -eq 0 ]]; exit; }

started=$SECONDS
work=$(mktemp -d -t ar-systemd-$$.XXXXXX)
board=$work/board
mkdir -p "$board"
nspawn_pid="" init_pid=""
cleanup() {
  if [[ -n $nspawn_pid ]]; then
    kill -TERM "$nspawn_pid" 2>/dev/null          # nspawn: a clean poweroff of the container
    for _ in $(seq 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$nspawn_pid" 2>/dev/null
    wait "$nspawn_pid" 2>/dev/null
  fi
  # The container's init ends every process in its pid namespace when it goes.
  [[ -n $init_pid ]] && kill -0 "$init_pid" 2>/dev/null && kill -KILL "$init_pid" 2>/dev/null
  mountpoint -q "$root/proc" 2>/dev/null && umount -l "$root/proc"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. systemd in the root (the package test installed the robot's package without it).
mount --bind /proc "$root/proc"
t=$SECONDS
if timeout 300 chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
     apt-get install -y -qq --no-install-recommends systemd systemd-sysv >"$work/apt.log" 2>&1; then
  pass "apt-get installs systemd into the root ($((SECONDS - t)) s)"
else
  tail -20 "$work/apt.log" >&2; fail "apt-get installs systemd into the root"; finish
fi
umount "$root/proc"

# The robot's config: the simulated board, no mDNS (the container has loopback only).
cat > "$root/etc/analog-remote/receive.toml" <<'TOML'
board = "serial:/run/board/link"
no-advertise = true
name = "robot-under-test"
TOML
cat > "$root/etc/analog-remote/fast-map.toml" <<'TOML'
profile = "motors"
[drive]
speed = 100
TOML
user_id=$(awk -F: '$1 == "analog-remote" { print $3 }' "$root/etc/passwd")
chown "$user_id" "$board"      # board-sim (the service user) makes its link here
# A controller run once: rest, then forward from 100 to 300 ms (the failsafe wants rest first; the
# controller says hello before its first state), then neutral.
printf '0 0 none\n100 0 forward\n300 0 forward\n' > "$board/once.script"
# Driving for two minutes: forward 1.5 s, rest 0.2 s (so a restarted receiver may drive again).
for ((ms = 0; ms < 120000; ms += 1700)); do printf '%d 0 none\n%d 0 forward\n' "$ms" $((ms + 200)); done > "$board/drive.script"
echo "120000 0 none" >> "$board/drive.script"

# 2. Boot it.
systemd-nspawn --quiet -D "$root" --machine="ar-systemd-$$" --register=no --keep-unit --private-network \
  --bind="$board:/run/board" -b </dev/null >"$work/boot.log" 2>&1 &
nspawn_pid=$!
for _ in $(seq 100); do
  for child in $(cat /proc/"$nspawn_pid"/task/*/children 2>/dev/null); do
    [[ $(cat "/proc/$child/comm" 2>/dev/null) == systemd ]] && init_pid=$child
  done
  [[ -n $init_pid ]] && break
  kill -0 "$nspawn_pid" 2>/dev/null || break
  sleep 0.1
done
[[ -n $init_pid ]] || { cat "$work/boot.log" >&2; fail "systemd-nspawn boots the root"; finish; }
inside() { nsenter -t "$init_pid" -a "$@"; }
state=""
for _ in $(seq 150); do
  state=$(inside systemctl is-system-running 2>/dev/null)
  [[ $state == running || $state == degraded ]] && break
  sleep 0.2
done
check "the root boots under systemd-nspawn, private network ($state, $((SECONDS - t)) s since apt)" test "$state" = running
prop() { inside systemctl show -p "$1" --value analog-remote; }

# The board's trace: "map HEX" after every change; the motors are bytes 0x22/0x23 (hex 69–72);
# "at MICROSECONDS" (CLOCK_MONOTONIC, which the container shares with this host) before each "cmd".
trace=$board/trace
mono_us() { python3 -c 'import time; print(time.monotonic_ns() // 1000)'; }
# Milliseconds from $2 (monotonic µs) to the first command after line $1 that left the motors
# at 0 and was taken at or after $2; empty when there is none (yet).
ms_to_rest() {
  tail -n +$(($1 + 1)) "$trace" 2>/dev/null | awk -v t0="$2" '
    $1 == "at" { at = $2 }
    $1 == "map" && substr($2, 69, 4) == "0000" && at != "" && at >= t0 { printf "%d\n", (at - t0) / 1000; exit }'
}
# The motors the last map line among the first $1 lines of the trace holds.
motors_at_line() { head -n "$1" "$trace" | awk '$1 == "map" { m = substr($2, 69, 4) } END { print m }'; }
# Waits (20 ms steps, up to 10 s) for a fresh forward phase of the driving controller: the
# motors at 0 (its rest), then at $1 — so that more than a second of driving lies ahead.
fresh_forward() {
  local _ seen_rest=0
  for _ in $(seq 500); do
    local m; m=$(last_motors)
    if ((seen_rest)); then [[ $m == "$1" ]] && return 0; else [[ $m == 0000 ]] && seen_rest=1; fi
    sleep 0.02
  done
  return 1
}
# How many times `analog-remote rest` (ExecStopPost) said the board is at rest.
rest_lines() { inside journalctl -u analog-remote -o cat --no-pager 2>/dev/null | grep -c '^board at rest: '; }
lines() { wc -l < "$trace" 2>/dev/null || echo 0; }
motors_after() { tail -n +$(($1 + 1)) "$trace" 2>/dev/null | awk '$1 == "map" { print substr($2, 69, 4) }'; }
last_motors() { motors_after 0 | tail -1; }
# The motor values the receiver wrote ("cmd W 22 LLRR") after line $1, oldest first.
motor_writes_after() { tail -n +$(($1 + 1)) "$trace" 2>/dev/null | awk '$1 == "cmd" && $2 == "W" && $3 == "22" { print $4 }'; }
# Waits until a map line after line $1 has motors $2 (e.g. c040: forward at speed 64).
wait_motors() {
  local _
  for _ in $(seq 100); do motors_after "$1" | grep -qx "$2" && return 0; sleep 0.1; done
  return 1
}
start_board() {
  inside systemd-run --quiet --unit=board-sim --collect --uid=analog-remote --gid=analog-remote \
    -p StandardOutput=append:/run/board/trace -p StandardError=append:/run/board/sim.err \
    /usr/bin/analog-remote board-sim --firmware motors --trace --trace-times --quiet --link /run/board/link
  local _
  for _ in $(seq 100); do [[ -L $board/link ]] && return 0; sleep 0.1; done
  return 1
}
check "board-sim runs as the service user on a pseudo-terminal at /run/board/link" start_board

# 3. Start: returns when a controller can drive.
t0=$(date +%s%N)
inside systemctl start analog-remote
start_status=$?
t1=$(date +%s%N)
start_ms=$(((t1 - t0) / 1000000))
udp_bound=0
grep -qi ':6A2F ' <(inside cat /proc/net/udp /proc/net/udp6) && udp_bound=1
probed=$(grep -c '^cmd ' "$trace")
mark=$(lines)
# (Not `systemd-run --wait`: that needs D-Bus, which a robot may lack. The unit stays loaded, not
# collected, so its exit status can be read once it is done.)
inside systemd-run --quiet --unit=drive-once -p StandardOutput=append:/run/board/once.out \
  -p StandardError=append:/run/board/once.out \
  /usr/bin/analog-remote control --quiet --peer 127.0.0.1:27183 --input script:/run/board/once.script
for _ in $(seq 100); do
  [[ $(inside systemctl show -p ActiveState --value drive-once) == @(inactive|failed) ]] && break
  sleep 0.1
done
once_status=$(inside systemctl show -p ExecMainStatus --value drive-once)
echo "      systemctl start → drivable: $start_ms ms (port bound: $udp_bound, board commands seen: $probed)"
check "systemctl start returns with the unit active, port 27183 bound and the board probed" \
  test "$start_status" -eq 0 -a "$(prop ActiveState)" = active -a "$udp_bound" -eq 1 -a "$probed" -gt 0
drove_at_once() { [[ $once_status -eq 0 ]] && wait_motors "$mark" c040; }
check "a controller started right after drives at once (its first forward states moved the motors)" drove_at_once

# 4. Reload: a new mapping, the same process.
inside systemd-run --quiet --unit=drive --collect -p StandardOutput=append:/run/board/drive.out -p StandardError=append:/run/board/drive.out \
  /usr/bin/analog-remote control --quiet --peer 127.0.0.1:27183 --input script:/run/board/drive.script
mark=$(lines)
check "a controller drives (forward at speed 64: motors c0 40)" wait_motors "$mark" c040
pid_before=$(prop MainPID) restarts_before=$(prop NRestarts)
# Ten reloads in a row, the mapping switched each time (speed 100: motors 9c 64; the profile's
# own: c0 40). Each is judged the moment `systemctl reload` returns: the unit active (not
# `reloading`), and the next forward phase of the driving controller at the new speed.
config=$root/etc/analog-remote/receive.toml
cp "$config" "$work/receive.toml.plain"
reload_failures=0 reload_worst_ms=0 reload_log=""
for i in $(seq 10); do
  if ((i % 2)); then
    { cat "$work/receive.toml.plain"; echo 'map = "/etc/analog-remote/fast-map.toml"'; } > "$config"; want=9c64
  else
    cp "$work/receive.toml.plain" "$config"; want=c040
  fi
  mark=$(lines)
  r0=$(date +%s%N)
  inside systemctl reload analog-remote
  reload_status=$?
  active=$(prop ActiveState)
  r_ms=$((($(date +%s%N) - r0) / 1000000))
  ((r_ms > reload_worst_ms)) && reload_worst_ms=$r_ms
  if [[ $reload_status -ne 0 || $active != active ]] || ! wait_motors "$mark" "$want"; then
    reload_failures=$((reload_failures + 1))
    reload_log+=" #$i(status $reload_status, $active, motors $(last_motors), wanted $want)"
  fi
done
echo "      10 reloads: the slowest systemctl reload took $reload_worst_ms ms"
check "10 reloads in a row: each returns 0 with the unit active at once and the next drive at the new speed (failures:${reload_log:- none})" \
  test "$reload_failures" -eq 0
# A bad config is refused: `systemctl reload` fails and says so, the unit stays active with the
# mapping in force (the last reload's: the profile's own, c0 40).
cp "$work/receive.toml.plain" "$config"
echo 'map = "/etc/analog-remote/no-such-map.toml"' >> "$config"
mark=$(lines)
inside systemctl reload analog-remote 2>"$work/reload.err"
bad_status=$? bad_active=$(prop ActiveState)
# Trap: not `journalctl | grep -q` under pipefail: grep leaves at the first match, journalctl
# then dies of SIGPIPE (141) and the pipeline fails although the line is there.
refused_kept() {
  [[ $bad_status -ne 0 && $bad_active == active ]] && fresh_forward c040 || return 1
  inside journalctl -u analog-remote -o cat --no-pager > "$work/reload-journal.txt" 2>&1
  grep -q 'reload refused, the running configuration stays: .*no-such-map' "$work/reload-journal.txt"
}
check "a bad config is refused: systemctl reload fails (status $bad_status), the unit stays $bad_active and drives with the running mapping" \
  refused_kept
cp "$work/receive.toml.plain" "$config"
echo 'map = "/etc/analog-remote/fast-map.toml"' >> "$config"
inside systemctl reload analog-remote
check "… and the corrected config is taken by the next reload (speed 100: motors 9c 64)" fresh_forward 9c64
check "… all without a restart (same MainPID $pid_before, NRestarts $restarts_before)" \
  test "$(prop MainPID)" = "$pid_before" -a "$(prop NRestarts)" = "$restarts_before"

# 5. The watchdog: a stalled receiver while the robot drives.
# Milliseconds as the unit says them ("1s", "500ms", "1s 500ms"); anything else (off) reads as 0 and fails.
milliseconds() {
  local total=0 part
  for part in $1; do
    if [[ $part =~ ^([0-9]+)ms$ ]]; then total=$((total + BASH_REMATCH[1]))
    elif [[ $part =~ ^([0-9]+)s$ ]]; then total=$((total + BASH_REMATCH[1] * 1000))
    elif [[ $part =~ ^([0-9]+)min$ ]]; then total=$((total + BASH_REMATCH[1] * 60000))
    else echo 0; return; fi
  done
  echo "$total"
}
watchdog_ms=$(milliseconds "$(prop WatchdogUSec)") restart_ms=$(milliseconds "$(prop RestartUSec)")
stall_goal_ms=1500
fresh_forward 9c64
pid=$(prop MainPID)
mark=$(lines)
t0=$(mono_us)
inside /bin/sh -c "kill -STOP $pid"
stop_ns=$(date +%s%N)
frozen=$(motors_at_line "$mark")
rest_ms=""
for _ in $(seq 250); do rest_ms=$(ms_to_rest "$mark" "$t0"); [[ -n $rest_ms ]] && break; sleep 0.02; done
echo "      SIGSTOP while driving (motors ${frozen:-?}): motors 0 after ${rest_ms:-never (5 s)} ms (goal ≤ $stall_goal_ms ms; WatchdogSec $watchdog_ms ms)"
check "a receiver stalled with SIGSTOP while driving leaves the motors at 0 within $stall_goal_ms ms (${rest_ms:-never} ms)" \
  test -n "$frozen" -a "$frozen" != 0000 -a -n "$rest_ms" -a "${rest_ms:-99999}" -le "$stall_goal_ms"
new_pid=$pid elapsed_ms=-1
for _ in $(seq 300); do
  new_pid=$(prop MainPID)
  if [[ $new_pid != "$pid" && $new_pid != 0 && $(prop ActiveState) == active ]]; then
    elapsed_ms=$((($(date +%s%N) - stop_ns) / 1000000)); break
  fi
  sleep 0.1
done
limit_ms=$((watchdog_ms + restart_ms + 1000))
echo "      stalled with motors ${frozen:-?}; running again after $elapsed_ms ms (WatchdogSec $watchdog_ms ms + RestartSec $restart_ms ms + 1 s = $limit_ms ms)"
check "… killed by the watchdog and running again within $limit_ms ms" \
  test -n "$frozen" -a "$elapsed_ms" -ge 0 -a "$elapsed_ms" -le "$limit_ms" -a "$watchdog_ms" -gt 0
wait_motors "$mark" 9c64
after=$(motor_writes_after "$mark" | uniq | tr '\n' ' ')
rest_first() { [[ $after == "0000 "* && $after == *9c64* ]]; }
check "the board is written to rest (motors 0) before it drives again (motor writes after the stall: $after)" rest_first
doctor_line() { inside analog-remote doctor --no-probe 2>&1 | grep '^[a-z]* *service:'; }
line=$(doctor_line)
echo "      doctor: $line"
watchdog_told() { [[ $line == "warn  service: analog-remote.service is active (running) but needed 1 automatic restart; last exit: "*"watchdog timeout"* ]]; }
check "doctor tells the restart and the watchdog" watchdog_told

# 5b. Deaths the receiver cannot see: SIGKILL (as the OOM killer), SIGABRT (as a crash), while
#     driving. The board must be at rest within kill_goal_ms, written by someone else than the dead.
kill_goal_ms=300
death_case() {
  local sig=$1 pid mark t0 frozen rest_ms="" said_before said=0 new_pid after _
  if ! fresh_forward 9c64; then fail "$sig: the controller drives (no fresh forward phase in 10 s)"; return; fi
  pid=$(prop MainPID)
  said_before=$(rest_lines)
  mark=$(lines)
  t0=$(mono_us)
  inside /bin/sh -c "kill -$sig $pid"
  frozen=$(motors_at_line "$mark")
  for _ in $(seq 250); do rest_ms=$(ms_to_rest "$mark" "$t0"); [[ -n $rest_ms ]] && break; sleep 0.02; done
  echo "      $sig while driving (motors ${frozen:-?}): motors 0 after ${rest_ms:-never (5 s)} ms (goal ≤ $kill_goal_ms ms)"
  check "$sig while driving: the motors are at 0 within $kill_goal_ms ms (${rest_ms:-never} ms)" \
    test -n "$frozen" -a "$frozen" != 0000 -a -n "$rest_ms" -a "${rest_ms:-99999}" -le "$kill_goal_ms"
  for _ in $(seq 100); do (($(rest_lines) > said_before)) && { said=1; break; }; sleep 0.1; done
  check "… and ExecStopPost's \`analog-remote rest\` confirmed the board at rest after the death" test "$said" -eq 1
  new_pid=$pid
  for _ in $(seq 100); do
    new_pid=$(prop MainPID)
    [[ $new_pid != "$pid" && $new_pid != 0 && $(prop ActiveState) == active ]] && break
    sleep 0.1
  done
  wait_motors "$mark" 9c64
  after=$(motor_writes_after "$mark" | uniq | tr '\n' ' ')
  restarted_rest_first() { [[ $new_pid != "$pid" && $after == "0000 "* && $after == *9c64* ]]; }
  check "… restarted ($(prop NRestarts) restarts so far), it drives again after rest (motor writes: $after)" restarted_rest_first
}
death_case KILL
death_case ABRT

# 6. The board unplugged while it runs: the receiver stays up and takes it back (rest first).
pid=$(prop MainPID)
inside systemctl stop board-sim
lost=0
for _ in $(seq 100); do inside journalctl -u analog-remote -o cat --no-pager 2>/dev/null | grep -c "board lost" >/dev/null && { lost=1; break; }; sleep 0.1; done
check "the board unplugged while running: the receiver says so and keeps running" test "$lost" -eq 1 -a "$(prop ActiveState)" = active -a "$(prop MainPID)" = "$pid"
mark=$(lines)
start_board
replugged() { wait_motors "$mark" 9c64 && [[ $(motor_writes_after "$mark" | head -1) == 0000 && $(prop MainPID) == "$pid" ]]; }
check "… and when it is back, writes rest first, then drives, in the same process" replugged

# 7. Stop while driving: motors 0, exit 0.
wait_motors "$(($(lines) - 1))" 9c64
inside systemctl stop analog-remote
stop_status=$?
check "systemctl stop while driving leaves the motors at 0 (last: $(last_motors))" test "$stop_status" -eq 0 -a "$(last_motors)" = 0000
check "… and the receiver exits 0 ($(prop ExecMainCode)/$(prop ExecMainStatus), $(prop Result))" \
  test "$(prop ExecMainStatus)" = 0 -a "$(prop Result)" = success

# 8. Started without its board (a robot booted with the board unplugged): exit 3, started again
#    every RestartSec until the board is there.
inside systemctl stop board-sim
inside systemctl start --no-block analog-remote
restarts=$(prop NRestarts)
retried=0 exit3=0
for _ in $(seq 200); do
  [[ $(prop ExecMainStatus) == 3 ]] && exit3=1
  (($(prop NRestarts) >= restarts + 2)) && { retried=1; break; }
  sleep 0.1
done
unplug_told() { [[ $line == "fail  service: analog-remote.service is activating"*"exit 3 (a device (the board) unavailable)"* ]]; }
# Asked between two runs: not in the moment ExecStopPost's `rest` runs (the unit is then
# deactivating), so a few tries.
for _ in 1 2 3 4 5; do line=$(doctor_line); unplug_told && break; sleep 0.3; done
echo "      doctor: $line"
check "no board at start: the receiver exits 3 and is started again and again ($(prop NRestarts) restarts)" test "$exit3" -eq 1 -a "$retried" -eq 1
check "doctor says it is restarting and why" unplug_told
mark=$(lines)
start_board
back=0
for _ in $(seq 150); do [[ $(prop ActiveState) == active ]] && { back=1; break; }; sleep 0.1; done
back_and_driving() { [[ $back -eq 1 ]] && wait_motors "$mark" 9c64; }
check "the board plugged in: the service runs and drives" back_and_driving
inside systemctl stop drive; inside systemctl stop analog-remote; inside systemctl stop board-sim

# 9. The journal.
inside journalctl -u analog-remote --no-pager -o cat > "$work/journal.txt" 2>&1
for entry in "Started analog-remote.service" "Watchdog timeout" "Stopped analog-remote.service"; do
  check "journalctl -u analog-remote shows \"$entry\"" grep -q "$entry" "$work/journal.txt"
done
# libdispatch's manager thread, started by a dispatch source, asks for nice -4 as it starts;
# refused in an unprivileged service, it logs this through syslog into the unit's journal. The
# receiver uses no dispatch source: looked for over every start of this test, and every `rest`
# and `reload` the unit ran.
starts=$(grep -c "Started analog-remote.service" "$work/journal.txt")
check "no start of the $starts has libdispatch's \"Failed to set thread priority\" in the unit's journal" \
  bash -c '! grep -q "Failed to set thread priority" "$0"' "$work/journal.txt"
inside journalctl --no-pager -o verbose -g 'Failed to set thread priority' 2>/dev/null | grep -E '_SYSTEMD_UNIT=|_COMM=' | sort | uniq -c | sed 's/^/      (whole journal) /'
if ((failed)); then
  echo "--- journal" >&2; tail -40 "$work/journal.txt" >&2
  echo "--- board-sim" >&2; tail -n 5 "$board/sim.err" >&2
  echo "--- the board's trace" >&2; tail -n 40 "$trace" >&2
  echo "--- controllers" >&2; tail -n 5 "$board/once.out" "$board/drive.out" >&2
fi
finish
