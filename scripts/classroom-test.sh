#!/usr/bin/env bash
# classroom-test.sh — a classroom on one machine: many hosts, two sessions with clashing robot
# names, every driver starting at once.
#
#   scripts/classroom-test.sh                    CI size: session A 5 robots, session B 3 (8 in all)
#   scripts/classroom-test.sh --robots 30 --second 6 --hold 10 --warmup 5   the documented manual run
#                                                (--warmup: the robots are on this long before the
#                                                drivers start, as in a class; default 4)
#   scripts/classroom-test.sh --release --robots 30 --second 6 --hold 10 --warmup 5
#                                                the same with .build/release/analog-remote (build it
#                                                first: swift build -c release --product analog-remote,
#                                                and again with --product analog-remote-web):
#                                                stop-all's time at 30 robots is a performance figure,
#                                                quoted from the release build a classroom installs
#   ANALOG_REMOTE=path/to/analog-remote          the binary (default .build/debug/analog-remote)
#   CLASSROOM_LOG_LEVEL=debug                    the drivers' --log-level (default info); debug logs
#                                                every discovery event, to see where a start-up went
#
# Hosts are network namespaces on one bridge (which lives in a namespace of its own), each with its
# own private /run, D-Bus system bus and avahi-daemon (scripts/netns/host.sh): one host per robot
# (`receive --board sim --trace-board`), one per driver (`control --session S --receiver NAME`), and
# one teacher (`stop-all`). Session A's robots are robot1…robotN, session B's robot1…robotM: the same
# display names in two sessions. Drivers all start at the same instant (a FIFO barrier).
#
# Driver i holds a state of its own: no throttle, level, and the buttons of i's binary digits — a
# resting state (the receiver drives on it from the first packet), unique per driver. Receivers use
# a mapping that writes each of 13 buttons to its own address, so every `map` line a board prints
# says which driver's state it holds. Checks:
#   names       every receiver is announced under its own display name (no "#2" across sessions)
#   own-robot   every board shows its own driver's state (and the time the last one did)
#   crosstalk   no board ever shows another driver's state; no receiver ignored a foreign controller
#   failsafe    no failsafe trip while the drivers send (no "FAILSAFE" line, failsafes=0)
#   address move  robot 1 loses its IPv4 address mid-drive: its driver moves to the robot's IPv6
#               address after 2 s of silence; the receiver recognises it by its connection (no
#               other controller, no new hello) and the board shows its state again
#   stop-all    the teacher's stop-all of A reaches each of A's robots once ("reached N of N"),
#               leaves B's robots alone; then B's; then A is released (`stop-all --release`), its
#               drivers drive it again, and A is stopped once more ("again"). Each stop's time to the
#               last robot is from the command's start to the last board of the session showing its
#               rest values (motors 0, every button's output off), from the boards' time-stamped
#               `map` lines. A's first stop is the first of a lesson (cold): a teacher state
#               directory with nothing in it, so only the broadcast stop (every host on the link,
#               port 27183) reaches A's robots before DNS-SD could; "again" also knows them from the
#               first (known). Both are judged: cold at most CLASSROOM_COLD_BOUND_MS (default 100),
#               known at most CLASSROOM_KNOWN_BOUND_MS (default 50); `off` prints them only (a
#               machine shared with builds, load far above its cores, where a process start alone
#               takes longer). Every receiver listens on the default port but B's last, on a port
#               of its own: the broadcast cannot reach it, DNS-SD must ("other port"). B's time is
#               printed only. The clock starts in the shell that runs the command, just before it
#               becomes the teacher's `analog-remote stop-all` (no wrapper process in between: the
#               time is the command's own, from its exec). Each line names the binary: on this one
#               machine every host shares two cores, so a debug build's start-up and its 70
#               processes' load count several times over.
#   broadcast attacks  a student's host (driver 1's) keeps a copy of the teacher's broadcast stop
#               of A; once A is released and driving again it broadcasts that copy (a replay), the
#               copy with another nonce under its MAC (a forgery), and runs a stop-all of A signed
#               with a key of its own (a wrong key): none of A's robots goes to rest
#   doctor broadcast  `doctor --session A` on the teacher's host: all of A's receivers answered its
#               broadcast query
#   dashboard   the teacher's host also runs `web --session A --teacher-key-file` with a logged-in
#               dashboard (scripts/classroom_dashboard.py: the dashboard's WebSocket, no browser)
#               from the warm-up on: every robot of session A has a row that shows it DRIVING with
#               its own driver, and the web server uses under 5 % of a core over the steady window
#               (CPU time from /proc, like the avahi figure)
#   dashboard kill  at the end, session A's last robot's receiver is SIGKILLed (its avahi-daemon
#               withdraws the service, so DNS-SD says "remove"): its row turns OFFLINE within
#               2.5 s and is still on the dashboard 10 s later
#   mdns        mDNS packets on the bridge (tcpdump): the peak per second while discovering (from
#               the drivers' start until every robot drove) and while driving steadily (from
#               SETTLE_S later, and no sooner than ANNOUNCE_S after the last robot was announced,
#               until the teacher acts); the steady peak must stay under 50/s
#
# Where it cannot run (not root, no `ip netns`) it prints one line starting with "SKIPPED:" and
# exits 0. Everything it starts is stopped by pid and every namespace is deleted on every exit path
# (trap EXIT). Bounded: every wait has a timeout. Last line: `classroom: N passed, M failed`.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${ANALOG_REMOTE:-$ROOT/.build/debug/analog-remote}
# The binary's comm (its first 15 bytes): stop_pid checks it, and ANALOG_REMOTE may name a copy.
BIN_COMM=$(basename "$BIN" | cut -c1-15)
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN";; esac     # the hosts run it from another working directory
ROBOTS_A=5; ROBOTS_B=3; HOLD_S=5; KEEP=""; WARMUP_S=4
COLD_BOUND_MS=${CLASSROOM_COLD_BOUND_MS:-100}   # the first stop-all of A (no state): its last robot at rest by then
KNOWN_BOUND_MS=${CLASSROOM_KNOWN_BOUND_MS:-50}  # A again, known from the first
for bound in "$COLD_BOUND_MS" "$KNOWN_BOUND_MS"; do
    [[ "$bound" =~ ^([0-9]+|off)$ ]] || { echo "classroom-test: a bound is milliseconds or off, not '$bound'" >&2; exit 64; }
done
SETTLE_S=2     # after the last robot drove: the tail of discovery (browse back-off) before "steady"
# avahi-daemon announces a new host's address records, and each new service, three times: at once,
# 1 s later and 2 s after that (plus up to 250 ms of jitter). Those waves are the responders'
# start-up, not the class's driving: at 8 robots the third wave of 18 hosts × 2 families alone is
# 36 packets in one second. So the robots warm up this long by default, and the steady count never
# starts sooner than this after the last robot was announced (with --warmup 0 too).
ANNOUNCE_S=4
while [ $# -gt 0 ]; do
    case "$1" in
        --robots) ROBOTS_A=$2; shift 2;;
        --second) ROBOTS_B=$2; shift 2;;
        --hold) HOLD_S=$2; shift 2;;
        --warmup) WARMUP_S=$2; shift 2;;
        --keep-logs) KEEP=1; shift;;
        --release) BIN=$ROOT/.build/release/analog-remote; BIN_COMM=analog-remote; shift;;
        *) echo "usage: $0 [--release] [--robots N] [--second M] [--hold SECONDS] [--warmup SECONDS] [--keep-logs]" >&2; exit 64;;
    esac
done
N=$((ROBOTS_A + ROBOTS_B))
[ "$N" -ge 2 ] && [ "$N" -le 200 ] || { echo "classroom-test: 2…200 robots in all" >&2; exit 64; }

RUN="arc$$"
SW="$RUN-sw"
STATE=""
declare -a MADE=()        # namespaces made
declare -a PIDS=()        # "pid:comm|comm" of processes started
declare -a HOSTS=()       # host names, in order
declare -a D_PID=() R_PID=() BEFORE=() BEFORE_STOP=()
declare -A IP4=()         # host name → its IPv4 address
PASS=0; FAILS=0

skip() { echo "SKIPPED: classroom test: $*"; exit 0; }
[ "$(id -u)" -eq 0 ] || skip "needs root (ip netns, mount --bind); run it as root or in CI"
for tool in ip unshare nsenter avahi-daemon dbus-daemon; do
    command -v "$tool" >/dev/null || skip "no '$tool' (run scripts/setup.sh)"
done
# The dashboard's `web` runs analog-remote-web from beside $BIN.
for b in "$BIN" "$BIN-web"; do
    [ -x "$b" ] || { echo "classroom-test: $b is not built (run: swift build$(case "$BIN" in */release/*) echo " -c release";; esac) --product $(basename "$b"))" >&2; exit 1; }
done
# How the stop-all lines name the binary (its times depend on the build).
case "$BIN" in
    "$ROOT"/.build/release/*) BUILD_KIND="release build";;
    "$ROOT"/.build/debug/*) BUILD_KIND="debug build";;
    *) BUILD_KIND=$BIN;;
esac

# pid_is, stop_pid, write_avahi_conf (the two-host library; its set-up is not used here).
# shellcheck source=netns/lib.sh
source "$ROOT/scripts/netns/lib.sh"

cleanup() {
    local status=$? entry h ns
    trap - EXIT INT TERM
    for entry in "${PIDS[@]}"; do stop_pid "${entry%%:*}" "${entry#*:}"; done
    if [ -n "$STATE" ]; then
        for h in "${HOSTS[@]}"; do
            [ -f "$STATE/$h/avahi.pid" ] && stop_pid "$(cat "$STATE/$h/avahi.pid")" avahi-daemon
            [ -f "$STATE/$h/dbus.pid" ] && stop_pid "$(cat "$STATE/$h/dbus.pid")" dbus-daemon
            [ -f "$STATE/$h/holder.pid" ] && stop_pid "$(cat "$STATE/$h/holder.pid")" "$HOLDER_COMMS"
        done
    fi
    for ns in "${MADE[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
    if [ -n "$STATE" ]; then
        if [ -n "$KEEP" ]; then echo "logs kept in $STATE" >&2; else rm -rf "$STATE"; fi
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
check() { # NAME OK(0/1) DETAIL
    if [ "$2" -eq 0 ]; then PASS=$((PASS + 1)); echo "  ok   $1: $3"; else FAILS=$((FAILS + 1)); echo "  FAIL $1: $3"; fi
}

ip netns add "$RUN-probe" 2>/dev/null || skip "cannot create a network namespace (no CAP_SYS_ADMIN here?)"
ip netns del "$RUN-probe"

STATE=$(mktemp -d -t "$RUN.XXXXXX")

# ---------------------------------------------------------------------------------------------
# The network: a bridge in a namespace of its own; one veth per host.

ip netns add "$SW" && MADE+=("$SW")
ip -n "$SW" link add br0 type bridge
ip -n "$SW" link set br0 up
ip -n "$SW" link set lo up

# add_host NAME INDEX — namespace, cable, addresses (IPv4 198.18.x.y/16 + IPv6 link-local), then
# host.sh (private /run, dbus, avahi) in the background.
add_host() {
    local name=$1 k=$2 ns="$RUN-$1" dir="$STATE/$1"
    ip netns add "$ns" && MADE+=("$ns")
    HOSTS+=("$name")
    mkdir -p "$dir/run"
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.accept_dad=0 2>/dev/null || true
    ip -n "$SW" link add "p$k" type veth peer name eth0 netns "$ns"
    ip -n "$SW" link set "p$k" master br0
    ip -n "$SW" link set "p$k" up
    IP4[$name]="198.18.$((k / 250)).$((k % 250 + 1))"
    ip -n "$ns" addr add "${IP4[$name]}/16" brd + dev eth0      # brd +: the subnet broadcast, as DHCP sets it
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    write_avahi_conf "$dir/avahi-daemon.conf" "$RUN-$name" eth0
    ip netns exec "$ns" unshare -m --propagation private sh "$ROOT/scripts/netns/host.sh" "$dir" >"$dir/host.log" 2>&1 &
    echo $! > "$dir/holder.pid"
}

wait_hosts() {
    local h i
    for h in "${HOSTS[@]}"; do
        for i in $(seq 1 200); do
            [ -e "$STATE/$h/ready" ] && continue 2
            pid_is "$(cat "$STATE/$h/holder.pid")" "$HOLDER_COMMS" || break
            sleep 0.1
        done
        echo "host $h did not come up:" >&2; cat "$STATE/$h/host.log" >&2; exit 1
    done
}

# spawn HOST OUT [GO] -- CMD… — run CMD inside HOST with time-stamped output (netns/stamp-run.sh);
# its pid lands in $SPAWNED and it is stopped on exit.
spawn() {
    local h=$1 out=$2; shift 2
    env -u DBUS_SYSTEM_BUS_ADDRESS -u AVAHI_COMPAT_NOWARN \
        nsenter -t "$(cat "$STATE/$h/holder.pid")" -m -n -- bash "$ROOT/scripts/netns/stamp-run.sh" "$out" "$@" \
        </dev/null >/dev/null 2>&1 &
    SPAWNED=$!
    PIDS+=("$SPAWNED:$BIN_COMM|tcpdump|env|nsenter|bash")
}

# ---------------------------------------------------------------------------------------------
# The classroom

SESSION_A=class-a; SESSION_B=class-b
declare -a R_SESSION=() R_NAME=()          # robot i (1-based index into these, 0 unused)
R_SESSION+=(""); R_NAME+=("")
for i in $(seq 1 "$ROBOTS_A"); do R_SESSION+=("$SESSION_A"); R_NAME+=("robot$i"); done
for i in $(seq 1 "$ROBOTS_B"); do R_SESSION+=("$SESSION_B"); R_NAME+=("robot$i"); done

echo "classroom: $ROBOTS_A robots in session $SESSION_A, $ROBOTS_B in $SESSION_B (robot1…robot$((ROBOTS_A < ROBOTS_B ? ROBOTS_A : ROBOTS_B)) in both), $N drivers, 1 teacher: $((2 * N + 1)) hosts"
t_setup=$(now_ms)
k=1
for i in $(seq 1 "$N"); do add_host "r$i" "$k"; k=$((k + 1)); add_host "d$i" "$k"; k=$((k + 1)); done
add_host teacher "$k"
wait_hosts
echo "  hosts up in $(( $(now_ms) - t_setup )) ms"

# The mapping: each of 13 buttons lights its own address (0x11…0x1d); motors as the kit.
BUTTONS=(a b x y l r start select home l3 r3 left right)
{
    for b in $(seq 0 12); do
        printf '[[buttons]]\nbutton = "%s"\naddress = %d\non = 1\noff = 0\n' "${BUTTONS[$b]}" $((0x11 + b))
    done
} > "$STATE/ids.toml"

# Driver i's state: the buttons of i's binary digits. pattern_of I → the `map` line it gives.
buttons_of() {
    local i=$1 b out=""
    for b in $(seq 0 12); do (( (i >> b) & 1 )) && out+="${out:++}${BUTTONS[$b]}"; done
    echo "$out"
}
pattern_of() {
    local i=$1 b hex=""
    for a in $(seq 0 35); do
        if [ "$a" -ge $((0x11)) ] && [ "$a" -le $((0x1d)) ] && (( (i >> (a - 0x11)) & 1 )); then hex+="01"; else hex+="00"; fi
    done
    echo "map $hex"
}
REST="map $(printf '0%.0s' $(seq 1 72))"
declare -a PATTERN=()
for i in $(seq 1 "$N"); do PATTERN[i]=$(pattern_of "$i"); done

# The teacher key of the class (every receiver obeys it; the dashboard and stop-all sign with it).
# A keygen key is used as it is: no passphrase stretching (scrypt) in each of the processes.
"$BIN" keygen --output "$STATE/teacher.key" >/dev/null

# Receivers (all at once; each waits for nothing), then wait until every one is announced. Each
# on the default port, as installed, but B's last: a port of its own (only DNS-SD finds it).
OTHER_PORT_I=$N
for i in $(seq 1 "$N"); do
    port=(); [ "$i" -eq "$OTHER_PORT_I" ] && port=(--port 0)
    spawn "r$i" "$STATE/r$i.log" -- "$BIN" receive --session "${R_SESSION[$i]}" --name "${R_NAME[$i]}" "${port[@]}" \
        --map "$STATE/ids.toml" --board sim --trace-board --teacher-key-file "$STATE/teacher.key"
    R_PID[i]=$SPAWNED
done
if command -v tcpdump >/dev/null; then
    # On the bridge itself: every mDNS packet any host sends enters it once.
    ip netns exec "$SW" bash "$ROOT/scripts/netns/stamp-run.sh" "$STATE/tcpdump.log" -- \
        tcpdump -i br0 -n -U -w "$STATE/mdns.pcap" udp port 5353 </dev/null >/dev/null 2>&1 &
    TCPDUMP=$!
    PIDS+=("$TCPDUMP:tcpdump|ip|bash")
else
    TCPDUMP=""
fi
deadline=$(( $(now_ms) + 30000 ))
for i in $(seq 1 "$N"); do
    until grep -q 'notice: announced as ' "$STATE/r$i.log" 2>/dev/null; do
        [ "$(now_ms)" -lt "$deadline" ] || { cat "$STATE/r$i.log" >&2; echo "robot $i was not announced" >&2; exit 1; }
        sleep 0.05
    done
done
bad_names=""
for i in $(seq 1 "$N"); do
    grep -q "notice: announced as \"${R_NAME[$i]}\" in session \"${R_SESSION[$i]}\"" "$STATE/r$i.log" \
        || bad_names+=" ${R_SESSION[$i]}/${R_NAME[$i]}→$(grep -m1 -o 'announced as "[^"]*"' "$STATE/r$i.log" || true)"
done
check names "$([ -z "$bad_names" ] && echo 0 || echo 1)" \
    "${bad_names:-all $N announced under their own names; robot1…robot$((ROBOTS_A < ROBOTS_B ? ROBOTS_A : ROBOTS_B)) exist in both sessions}"

t_announced=$(now_ms)

# The teacher's dashboard on session A: the web server, then a logged-in dashboard client, both
# on the teacher's host (the client on its loopback). Started in the warm-up, so it adds no wait.
spawn teacher "$STATE/web.log" -- env XDG_STATE_HOME="$STATE/teacher/state" "$BIN" web --quiet --session "$SESSION_A" \
    --host 127.0.0.1 --port 0 --teacher-key-file "$STATE/teacher.key" --no-qr
WEB_PID=$SPAWNED
deadline=$(( $(now_ms) + 20000 ))
until grep -q 'serving https on tcp port' "$STATE/web.log" 2>/dev/null; do
    [ "$(now_ms)" -lt "$deadline" ] && pid_is "$WEB_PID" "$BIN_COMM|env|nsenter|bash" || { cat "$STATE/web.log" >&2; echo "the web server did not start" >&2; exit 1; }
    sleep 0.05
done
WEB_PORT=$(grep -o 'serving https on tcp port [0-9]*' "$STATE/web.log" | awk '{ print $NF }')
nsenter -t "$(cat "$STATE/teacher/holder.pid")" -n -- python3 "$ROOT/scripts/classroom_dashboard.py" "$WEB_PORT" \
    "$STATE/teacher.key" "$STATE/dashboard.json" >"$STATE/dashboard.log" 2>&1 &
DASH_PID=$!
PIDS+=("$DASH_PID:python3|nsenter")

# The warm-up counts from the announcements: the server's start-up above is part of it.
warm_ms=$(( t_announced + WARMUP_S * 1000 - $(now_ms) ))
[ "$warm_ms" -gt 0 ] && sleep "$(awk -v ms="$warm_ms" 'BEGIN { printf "%.3f", ms / 1000 }')"

# CPU seconds (user + system) of a set of pids, from /proc/PID/stat (fields 14, 15; clock ticks).
TICKS=$(getconf CLK_TCK)
cpu_of() {
    local pid total=0 f
    for pid in "$@"; do
        [ -r "/proc/$pid/stat" ] || continue
        f=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null) || continue
        set -- $f; total=$(( total + ${12} + ${13} ))
        shift $#
    done
    echo "$total"
}
avahi_pids() { local h; for h in "${HOSTS[@]}"; do cat "$STATE/$h/avahi.pid" 2>/dev/null; done; }

# Drivers: all start at once (they wait on the GO FIFO), each holds its state for the whole run.
GO="$STATE/go"; mkfifo "$GO"
HOLD_MS=$(( (HOLD_S + 60) * 1000 ))
for i in $(seq 1 "$N"); do
    printf '0 0 %s\n%d 0 %s\n' "$(buttons_of "$i")" "$HOLD_MS" "$(buttons_of "$i")" > "$STATE/d$i.script"
    spawn "d$i" "$STATE/d$i.log" "$GO" -- "$BIN" control --quiet --log-level "${CLASSROOM_LOG_LEVEL:-info}" --session "${R_SESSION[$i]}" --receiver "${R_NAME[$i]}" \
        --name "driver$i" --input "script:$STATE/d$i.script"
    D_PID[i]=$SPAWNED
done
exec 9<>"$GO"                      # the write end, open at once (read-write never blocks on Linux)
deadline=$(( $(now_ms) + 60000 ))
for i in $(seq 1 "$N"); do
    until [ -e "$STATE/d$i.log.ready" ]; do
        [ "$(now_ms)" -lt "$deadline" ] || { echo "driver $i never reached the start line" >&2; exit 1; }
        sleep 0.05
    done
done
AVAHIS=$(avahi_pids)
avahi_cpu0=$(cpu_of $AVAHIS)
t0=$EPOCHREALTIME
exec 9>&-                          # go: every driver reads end of file at once
t0_ms=$(( $(now_ms) ))

# Own robot: every board shows its own driver's pattern.
deadline=$(( t0_ms + 30000 ))
declare -a FIRST=()
missing=$N
while [ "$missing" -gt 0 ] && [ "$(now_ms)" -lt "$deadline" ]; do
    missing=0
    for i in $(seq 1 "$N"); do
        [ -n "${FIRST[$i]:-}" ] && continue
        line=$(grep -m1 -F " ${PATTERN[$i]}" "$STATE/r$i.log" 2>/dev/null || true)
        if [ -n "$line" ]; then FIRST[i]=${line%% *}; else missing=$((missing + 1)); fi
    done
    [ "$missing" -gt 0 ] && sleep 0.1
done
worst=0; worst_i=0; times=()
for i in $(seq 1 "$N"); do
    [ -n "${FIRST[$i]:-}" ] || continue
    ms=$(awk -v a="${FIRST[$i]}" -v b="$t0" 'BEGIN { printf "%d", (a - b) * 1000 }')
    times+=("$ms"); [ "$ms" -gt "$worst" ] && { worst=$ms; worst_i=$i; }
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : 0) }')
if [ "$missing" -eq 0 ]; then
    check own-robot 0 "all $N boards show their own driver's state; last robot driving $worst ms after all drivers started (median $median ms, robot $worst_i)"
else
    notes=""; for i in $(seq 1 "$N"); do [ -n "${FIRST[$i]:-}" ] || notes+=" ${R_SESSION[$i]}/${R_NAME[$i]}"; done
    check own-robot 1 "$missing boards never showed their own driver's state:$notes"
    for i in $(seq 1 "$N"); do [ -n "${FIRST[$i]:-}" ] || { echo "--- d$i"; tail -20 "$STATE/d$i.log"; echo "--- r$i"; tail -20 "$STATE/r$i.log"; } >&2; done
fi
t_all=$(now_ms)
avahi_cpu=$(( ($(cpu_of $AVAHIS) - avahi_cpu0) * 1000 / TICKS ))
echo "  while discovering ($(( t_all - t0_ms )) ms): the $(echo $AVAHIS | wc -w) avahi-daemons used $avahi_cpu ms of CPU; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# Steady driving: the drivers hold their states; mDNS is counted from SETTLE_S after the last
# robot drove (the first queries back off over 1, 2, 4 … s), and not before the responders' own
# announcements are over (ANNOUNCE_S), for HOLD_S whole seconds, until the teacher acts.
steady_from=$(( t_all / 1000 + SETTLE_S ))
announced_until=$(( (t_announced + ANNOUNCE_S * 1000 + 999) / 1000 ))
[ "$announced_until" -gt "$steady_from" ] && steady_from=$announced_until
sleep "$(awk -v ms=$(( steady_from * 1000 - $(now_ms) )) 'BEGIN { printf "%.3f", (ms > 0 ? ms : 0) / 1000 }')"
web_cpu0=$(cpu_of "$WEB_PID"); t_web0=$(now_ms)
sleep "$(awk -v ms=$(( (steady_from + HOLD_S) * 1000 - $(now_ms) )) 'BEGIN { printf "%.3f", (ms > 0 ? ms : 0) / 1000 }')"
t_steady_end=$(now_ms)
web_cpu=$(( $(cpu_of "$WEB_PID") - web_cpu0 ))

# The dashboard: its client writes what it saw so far on SIGUSR1 (it goes on for the kill below).
kill -USR1 "$DASH_PID" 2>/dev/null || true
for _ in $(seq 1 50); do [ -s "$STATE/dashboard.json" ] && break; sleep 0.1; done
dash=$(python3 - "$STATE/dashboard.json" "$ROBOTS_A" <<'PY' 2>&1 || true
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print(f"1 the dashboard client wrote nothing ({e})"); sys.exit()
bad = [f"robot{i}: {d['rows'].get(f'robot{i}', {}).get('state', 'no row')}/{d['rows'].get(f'robot{i}', {}).get('driver', '')}"
       for i in range(1, int(sys.argv[2]) + 1)
       if d["rows"].get(f"robot{i}", {}).get("driver") != f"driver{i}" or not d["driving"].get(f"robot{i}")]
print(("1 " + ", ".join(bad)) if bad else f"0 all {sys.argv[2]} robots of the session have a row, DRIVING with their own driver; {d['pushes']} pushes")
PY
)
check dashboard "${dash%% *}" "${dash#* }"
[ "${dash%% *}" = 0 ] || { tail -5 "$STATE/dashboard.log" "$STATE/web.log" >&2; }
web_ms=$(( web_cpu * 1000 / TICKS )); window_ms=$(( t_steady_end - t_web0 ))
web_pct=$(awk -v c="$web_ms" -v w="$window_ms" 'BEGIN { printf "%.2f", (w > 0 ? 100 * c / w : 0) }')
check "dashboard cpu" "$(awk -v p="$web_pct" 'BEGIN { print (p < 5 ? 0 : 1) }')" \
    "the web server with the dashboard open used $web_pct % of a core over the steady ${window_ms} ms ($web_ms ms of CPU; goal < 5 %)"

# Stop-all of session A from the teacher, then B. Counted by identity: N of N, each robot once.
# STOP_MS: the time from the command's start to the last of the session's boards at rest.
stopall() { # SESSION EXPECTED OUT FIRST_ROBOT LAST_ROBOT LABEL STATE_HOME
    local t_start holder command dog
    holder=$(cat "$STATE/teacher/holder.pid")
    # The watchdog first (a hung stop-all is stopped after 20 s), so that nothing forks beside
    # the command while it runs.
    rm -f "$3.pid"
    # (Its sleep is ended when the command is: `&&` keeps the kill from running then.)
    ( sleep 20 && [ -s "$3.pid" ] && kill -TERM "$(cat "$3.pid")" 2>/dev/null ) &
    dog=$!
    PIDS+=("$dog:bash|sleep")
    # The subshell notes its pid and the time, then becomes nsenter, which enters the teacher's
    # namespaces and becomes the command. STATE_HOME: the teacher's state directory, where
    # stop-all keeps the receivers that took its last run of a session, and sends to first the
    # next time (empty: the first stop of a lesson).
    (
        unset DBUS_SYSTEM_BUS_ADDRESS AVAHI_COMPAT_NOWARN
        export XDG_STATE_HOME="$7"
        echo "$BASHPID" > "$3.pid"
        echo "$EPOCHREALTIME" > "$3.start"
        exec nsenter -t "$holder" -m -n -- "$BIN" stop-all --quiet --session "$1" --timeout 2 --teacher-key-file "$STATE/teacher.key"
    ) > "$3" 2>&1 &
    command=$!
    PIDS+=("$command:$BIN_COMM|nsenter|bash")
    wait "$command" || true
    pkill -P "$dog" sleep 2>/dev/null || true
    wait "$dog" 2>/dev/null || true
    t_start=$(cat "$3.start")
    local i t ms worst=-1 worst_i=0 at_rest=0 all=()
    for i in $(seq "$4" "$5"); do
        # The first board write at rest after the start (each board showed its driver's state until then).
        t=$(awk -v t0="$t_start" -v rest="$REST" '$1 >= t0 && index($0, " " rest) { print $1; exit }' "$STATE/r$i.log")
        [ -n "$t" ] || continue
        at_rest=$((at_rest + 1))
        ms=$(awk -v a="$t" -v b="$t_start" 'BEGIN { printf "%d", (a - b) * 1000 }')
        all+=("$ms"); [ "$ms" -gt "$worst" ] && { worst=$ms; worst_i=$i; }
    done
    STOP_MS=$worst
    STOP_NOTE="motors 0 on $at_rest of $(( $5 - $4 + 1 )) robots; the last (${R_SESSION[$worst_i]:-?}/${R_NAME[$worst_i]:-?}) $worst ms after stop-all started (first $(printf '%s\n' "${all[@]}" | sort -n | head -1) ms, median $(printf '%s\n' "${all[@]}" | sort -n | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "-") }') ms)"
    STOP_NOTE="$STOP_NOTE; $BUILD_KIND"
    echo "  stop-all $1${6:-}: $STOP_NOTE"
    [ "$at_rest" -eq $(( $5 - $4 + 1 )) ] || STOP_MS=-1
    local reached lines dupes
    reached=$(grep -o 'reached [0-9]* of [0-9]* receivers*' "$3" || true)
    lines=$(grep -c '^stopped ' "$3" || true)
    dupes=$(grep '^stopped ' "$3" | awk '{ print $2 }' | sort | uniq -d | tr '\n' ' ')
    if [[ "$reached" =~ ^reached\ $2\ of\ $2\ receivers?$ ]] && [ "$lines" -eq "$2" ] && [ -z "$dupes" ]; then
        check "stop-all $1${6:-}" 0 "$reached, one line per robot"
    else
        check "stop-all $1${6:-}" 1 "${reached:-no summary} with $lines stopped lines${dupes:+, twice: $dupes} (want $2 of $2)"; cat "$3" >&2
    fi
}
# Lines each receiver had written before the teacher acted: the failsafe and crosstalk checks
# cover exactly the time the drivers were sending.
for i in $(seq 1 "$N"); do BEFORE[i]=$(wc -l < "$STATE/r$i.log"); done


mkdir -p "$STATE/teacher/lesson"
# The attacker: a student's host listens on the receivers' port and keeps the first broadcast stop.
nsenter -t "$(cat "$STATE/d1/holder.pid")" -n -- timeout 60 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("", 27183))
while True:
    data, _ = s.recvfrom(2048)
    if len(data) > 21 and data[:2] == b"AR" and data[3] == 0x09 and data[20] == 1:
        open(sys.argv[1], "wb").write(data)
        break
' "$STATE/captured-stop.bin" >"$STATE/capture.log" 2>&1 &
PIDS+=("$!:timeout|nsenter|python3")
stopall "$SESSION_A" "$ROBOTS_A" "$STATE/stop-a.log" 1 "$ROBOTS_A" "" "$STATE/teacher/lesson"
STOP_NOTE_A=$STOP_NOTE; STOP_MS_A=$STOP_MS
untouched=0
for i in $(seq $((ROBOTS_A + 1)) "$N"); do grep -q 'STOPPED BY TEACHER' "$STATE/r$i.log" && untouched=1; done
check "other session" "$untouched" "$([ $untouched -eq 0 ] && echo "session $SESSION_B's robots untouched by $SESSION_A's stop-all" || echo "a robot of $SESSION_B was stopped by $SESSION_A's stop-all")"
stopall "$SESSION_B" "$ROBOTS_B" "$STATE/stop-b.log" $((ROBOTS_A + 1)) "$N" "" "$STATE/teacher/state"
other_port=$(grep -m1 -o 'receiving on udp port [0-9]*' "$STATE/r$OTHER_PORT_I.log" | awk '{ print $NF }' || true)
if [ -n "$other_port" ] && [ "$other_port" != 27183 ] \
    && grep -q "^stopped \"${R_NAME[$OTHER_PORT_I]}\" .*:$other_port\$" "$STATE/stop-b.log"; then
    check "other port" 0 "${R_SESSION[$OTHER_PORT_I]}/${R_NAME[$OTHER_PORT_I]} on udp port $other_port (no broadcast there) stopped through DNS-SD"
else
    check "other port" 1 "${R_SESSION[$OTHER_PORT_I]}/${R_NAME[$OTHER_PORT_I]} on udp port ${other_port:-?} was not stopped at that port"
    cat "$STATE/stop-b.log" >&2
fi

# Once more, as in a lesson: A released (its drivers drive it again), then stopped again. This
# time stop-all also knows A's receivers from its first run and sends to each before its browse starts.
COLD_NOTE=$STOP_NOTE_A; COLD_MS=$STOP_MS_A
t_release=$EPOCHREALTIME
env -u DBUS_SYSTEM_BUS_ADDRESS -u AVAHI_COMPAT_NOWARN XDG_STATE_HOME="$STATE/teacher/lesson" \
    nsenter -t "$(cat "$STATE/teacher/holder.pid")" -m -n -- \
    timeout 20 "$BIN" stop-all --quiet --release --session "$SESSION_A" --timeout 2 --teacher-key-file "$STATE/teacher.key" \
    > "$STATE/release-a.log" 2>&1 || true
deadline=$(( $(now_ms) + 15000 ))
driving_again=0
while [ "$(now_ms)" -lt "$deadline" ]; do
    driving_again=0
    for i in $(seq 1 "$ROBOTS_A"); do
        awk -v t0="$t_release" -v own="${PATTERN[$i]}" '$1 >= t0 && index($0, " " own) { found = 1; exit } END { exit !found }' "$STATE/r$i.log" \
            && driving_again=$((driving_again + 1))
    done
    [ "$driving_again" -eq "$ROBOTS_A" ] && break
    sleep 0.1
done
if [ "$driving_again" -eq "$ROBOTS_A" ]; then
    # The attacks, from the student's host, while A drives again.
    t_attack=$EPOCHREALTIME
    "$BIN" keygen --output "$STATE/wrong.key" >/dev/null
    if [ -s "$STATE/captured-stop.bin" ]; then
        nsenter -t "$(cat "$STATE/d1/holder.pid")" -n -- python3 -c '
import socket, sys
data = open(sys.argv[1], "rb").read()
forged = bytearray(data); forged[29] ^= 0xFF          # the nonce (payload byte 9) changed under the captured MAC
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
for _ in range(3):
    s.sendto(data, (sys.argv[2], 27183))
    s.sendto(bytes(forged), (sys.argv[2], 27183))
' "$STATE/captured-stop.bin" 198.18.255.255 >"$STATE/attack.log" 2>&1 || true
    fi
    env -u DBUS_SYSTEM_BUS_ADDRESS -u AVAHI_COMPAT_NOWARN XDG_STATE_HOME="$STATE/d1/state" \
        nsenter -t "$(cat "$STATE/d1/holder.pid")" -m -n -- \
        timeout 20 "$BIN" stop-all --quiet --session "$SESSION_A" --timeout 1 --teacher-key-file "$STATE/wrong.key" \
        > "$STATE/wrong-key.log" 2>&1 || true
    sleep 0.3
    rested=""
    for i in $(seq 1 "$ROBOTS_A"); do
        awk -v t0="$t_attack" -v rest="$REST" '$1 >= t0 && (index($0, " " rest) || index($0, "STOPPED BY TEACHER")) { found = 1; exit } END { exit !found }' \
            "$STATE/r$i.log" && rested+=" ${R_NAME[$i]}"
    done
    refusals=$(cat "$STATE"/r[0-9]*.log | awk -v t0="$t_attack" '$1 >= t0' | grep -c 'stop-all refused' || true)
    if [ ! -s "$STATE/captured-stop.bin" ]; then
        check "broadcast attacks" 1 "the student's host never saw the teacher's broadcast stop (did it go out?)"
    elif [ -z "$rested" ] && grep -q 'reached 0 of' "$STATE/wrong-key.log"; then
        check "broadcast attacks" 0 "a replayed, a forged and a wrong-key broadcast stop: none of $ROBOTS_A robots of $SESSION_A went to rest ($refusals refusals logged)"
    else
        check "broadcast attacks" 1 "robots at rest after the attacks:${rested:- none}; the wrong-key stop-all said: $(tail -1 "$STATE/wrong-key.log")"
    fi
    # The attacks leave every receiver logging refusals and every avahi-daemon answering the
    # wrong-key browse: the known stop's time is taken once that is over, not during it.
    sleep 2
    stopall "$SESSION_A" "$ROBOTS_A" "$STATE/stop-a2.log" 1 "$ROBOTS_A" " again" "$STATE/teacher/lesson"
    WARM_NOTE=$STOP_NOTE; WARM_MS=$STOP_MS
else
    check "release" 1 "after stop-all --release only $driving_again of $ROBOTS_A robots of $SESSION_A drove again"
    cat "$STATE/release-a.log" >&2
    WARM_NOTE="not measured"; WARM_MS=-1
fi
for which in cold known; do
    if [ "$which" = cold ]; then ms=$COLD_MS; note=$COLD_NOTE; bound=$COLD_BOUND_MS; else ms=$WARM_MS; note=$WARM_NOTE; bound=$KNOWN_BOUND_MS; fi
    if [ "$bound" = off ]; then
        echo "  stop-all time ($which): $note (not judged: bound off)"
    elif [ "$ms" -ge 0 ] && [ "$ms" -le "$bound" ]; then
        check "stop-all time ($which)" 0 "$note (bound $bound ms)"
    else
        check "stop-all time ($which)" 1 "$note (bound $bound ms)"
    fi
done
for i in $(seq 1 "$N"); do BEFORE_STOP[i]=$(wc -l < "$STATE/r$i.log"); done

# doctor on the teacher's host: every receiver of A that DNS-SD lists on the default port
# answers its broadcast query (the robots stay stopped: a query changes nothing).
env -u DBUS_SYSTEM_BUS_ADDRESS -u AVAHI_COMPAT_NOWARN nsenter -t "$(cat "$STATE/teacher/holder.pid")" -m -n -- \
    timeout 30 "$BIN" doctor --no-probe --session "$SESSION_A" > "$STATE/doctor.log" 2>&1 || true
line=$(grep '^[a-z]* *broadcast:' "$STATE/doctor.log" || true)
if [[ "$line" == "ok    broadcast: all $ROBOTS_A receivers of session \"$SESSION_A\""* ]]; then
    check "doctor broadcast" 0 "${line#ok    }"
else
    check "doctor broadcast" 1 "${line:-no broadcast line}"; cat "$STATE/doctor.log" >&2
fi

# One address per receiver, end to end: robot 1's IPv4 address goes away while its driver drives.
# The driver hears nothing for 2 s and moves to the robot's IPv6 address with the same connection;
# the receiver recognises it (the same controller from a new address, its name and admission kept)
# and takes it over again, no other controller in between (after the teacher's stop-all the states
# are held, so "held" is all the board sees). The 2 s of silence would stop motors, as silence must.
ip -n "$RUN-r1" addr del "${IP4[r1]}/16" dev eth0
deadline=$(( $(now_ms) + 15000 ))
moved=1
while [ "$(now_ms)" -lt "$deadline" ]; do
    # Not `tail | grep -q`: under pipefail tail's SIGPIPE (grep quits at the match) fails the test.
    if grep -q 'moved to a new address' < <(tail -n +"$((BEFORE_STOP[1] + 1))" "$STATE/r1.log"); then moved=0; break; fi
    sleep 0.1
done
after_move=$(tail -n +"$((BEFORE_STOP[1] + 1))" "$STATE/r1.log")
# The driver's ping (with the connection id) goes before its first state from the new address, and
# the receiver handles a stranger's control datagram before that stranger's next one, even within one
# batch: not one state from the new address may be ignored.
since_move=$(sed -n '/moved to a new address/,$p' <<<"$after_move")
if [ "$moved" -eq 0 ] && ! grep -q 'ignoring controller' <<<"$after_move" \
   && grep -q 'still the owner .*controller=driver1' <<<"$since_move"; then
    check "address move" 0 "robot 1 lost its IPv4 address; its driver moved to its IPv6 address as the same controller and owns it again"
else
    check "address move" 1 "robot 1's driver did not move to its other address as the same controller"
    tail -20 "$STATE/d1.log" >&2; echo "$after_move" | grep -v ' map ' | tail -20 >&2
fi

# A receiver dies (SIGKILL: no bye, no safe state written; its avahi-daemon withdraws the service,
# so the teacher's DNS-SD browse says "remove"): the dashboard keeps its row, OFFLINE, loudly.
victim=$ROBOTS_A
if pid_is "${R_PID[$victim]}" "$BIN_COMM"; then
    t_kill=$EPOCHREALTIME
    kill -KILL "${R_PID[$victim]}"
    sleep 12.5
    kill -TERM "$DASH_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$DASH_PID" 2>/dev/null || break; sleep 0.1; done
    kill_check=$(python3 - "$STATE/dashboard.json" "${R_NAME[$victim]}" "$t_kill" <<'PY' 2>&1 || true
import json, sys
name, t_kill = sys.argv[2], float(sys.argv[3])
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print(f"1 the dashboard client wrote nothing ({e})"); sys.exit()
since = next((t for t in d.get("offline_since", {}).get(name, []) if t >= t_kill), None)
later = d.get("last_push", 0) - t_kill
if since is None:
    print(f"1 {name}'s row never turned OFFLINE after its receiver was killed (last row: {d['rows'].get(name)})")
elif since - t_kill > 2.5 or name not in d.get("present", []) or later < 10:
    print(f"1 {name}: OFFLINE {1000 * (since - t_kill):.0f} ms after the kill (limit 2500); in the last push "
          f"({later:.1f} s after the kill): {name in d.get('present', [])}")
else:
    row = d["rows"][name]
    print(f"0 {name}'s receiver SIGKILLed: its row OFFLINE {1000 * (since - t_kill):.0f} ms later (limit 2500), still there "
          f"{later:.1f} s after the kill{' (no longer announced)' if row.get('gone') else ''}")
PY
)
    check "dashboard kill" "${kill_check%% *}" "${kill_check#* }"
    [ "${kill_check%% *}" = 0 ] || { tail -20 "$STATE/web.log" >&2; }
else
    check "dashboard kill" 1 "robot $victim's receiver was not running before the kill"
fi

# Drivers end (SIGTERM: neutral packets and a bye), then receivers (their summaries).
for i in $(seq 1 "$N"); do stop_pid "${D_PID[$i]}" "$BIN_COMM|env|nsenter|bash"; done
for entry in "${PIDS[@]}"; do
    pid=${entry%%:*}
    case " ${D_PID[*]} " in *" $pid "*) continue;; esac
    [ "$pid" = "$TCPDUMP" ] && continue
    stop_pid "$pid" "$BIN_COMM|env|nsenter|bash"
done
[ -n "$TCPDUMP" ] && stop_pid "$TCPDUMP" "tcpdump|ip|bash"
sleep 0.3

# Crosstalk: every map line of every board is the rest state or its own driver's state; no
# receiver ignored a controller (nobody else ever sent to it).
cross=""
for i in $(seq 1 "$N"); do
    own=${PATTERN[$i]}
    while read -r map; do
        [ "$map" = "$REST" ] || [ "$map" = "$own" ] && continue
        who=""; for j in $(seq 1 "$N"); do [ "$map" = "${PATTERN[$j]}" ] && who="driver $j"; done
        cross+=" ${R_SESSION[$i]}/${R_NAME[$i]} showed ${who:-an unknown state ($map)};"
    done < <(head -n "${BEFORE[$i]}" "$STATE/r$i.log" | grep -o 'map [0-9a-f]*$' | sort -u)
    n=$(head -n "${BEFORE[$i]}" "$STATE/r$i.log" | grep -c 'ignoring controller' || true)
    [ "$n" -eq 0 ] || cross+=" ${R_SESSION[$i]}/${R_NAME[$i]} ignored another controller $n times;"
done
check crosstalk "$([ -z "$cross" ] && echo 0 || echo 1)" "${cross:-0 foreign states on $N boards, no receiver heard a foreign controller}"

# Failsafe: no trip while the drivers were sending.
trips=""
for i in $(seq 1 "$N"); do
    n=$(head -n "${BEFORE[$i]}" "$STATE/r$i.log" | grep -c 'FAILSAFE' || true)
    [ "$n" -eq 0 ] || trips+=" ${R_SESSION[$i]}/${R_NAME[$i]}: $n;"
done
check failsafe "$([ -z "$trips" ] && echo 0 || echo 1)" "${trips:-0 failsafe trips on $N robots while the drivers sent}"
[ -z "$trips" ] || for i in $(seq 1 "$N"); do head -n "${BEFORE[$i]}" "$STATE/r$i.log" | grep -B3 -A1 FAILSAFE >&2 || true; done

# mDNS load on the bridge: packets per second, peak while discovering (from the drivers' start
# until every robot drove) and while driving steadily (from then until the teacher acted).
if [ -n "$TCPDUMP" ] && [ -s "$STATE/mdns.pcap" ]; then
    tcpdump -n -tt -r "$STATE/mdns.pcap" 2>/dev/null | awk '{ print int($1) }' | sort -n | uniq -c > "$STATE/mdns.per-second"
    peak() { awk -v a="$1" -v b="$2" '$2 >= a && $2 < b && $1 > m { m = $1 } END { print m + 0 }' "$STATE/mdns.per-second"; }
    total=$(awk '{ s += $1 } END { print s + 0 }' "$STATE/mdns.per-second")
    disc_peak=$(peak $((t0_ms / 1000)) $((t_all / 1000 + 1)))
    steady_peak=$(peak "$steady_from" $((t_steady_end / 1000)))
    check mdns "$([ "$steady_peak" -lt 50 ] && echo 0 || echo 1)" \
        "peak $disc_peak packets/s while discovering, $steady_peak packets/s while driving steadily (goal < 50); $total mDNS packets in all"
else
    echo "  (no tcpdump: mDNS packets not counted)"
fi

echo "classroom: $PASS passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
