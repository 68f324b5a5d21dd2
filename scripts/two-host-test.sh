#!/usr/bin/env bash
# two-host-test.sh — DNS-SD discovery between two real "hosts" built from network namespaces.
#
#   scripts/two-host-test.sh [CASE…]        run all cases, or only those named
#   ANALOG_REMOTE=path/to/analog-remote     the binary to test (default .build/debug/analog-remote)
#
# Host A (198.18.0.1) and host B (198.18.0.2) are joined by a veth pair; each has its own private
# /run, D-Bus system bus and avahi-daemon (scripts/netns/lib.sh, host.sh). Nothing is started in
# the machine's own network namespace. Everything started here is stopped by pid and the
# namespaces are deleted on every exit path (EXIT/INT/TERM traps in lib.sh).
#
# Where it cannot run (not root, no `ip netns`, no namespaces allowed) it prints one line starting
# with "SKIPPED:" and exits 0 — CI must run it as root so that it never silently passes.
#
# Adding a case: write `case_NAME() { … }` using host_spawn/host_run/wait_for, return non-zero on
# failure (print why with `fail`), and append NAME to CASES below. Phase 2 adds `board_follows`:
# receiver with the simulated board on A, controller on B, the board's memory map follows.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${ANALOG_REMOTE:-$ROOT/.build/debug/analog-remote}
CASES=(advertise_seen_by_avahi hand_published_found sessions_isolated follow_new_port ambiguous_exit_6
       responder_restart name_clash discovery_time)

# shellcheck source=netns/lib.sh
source "$ROOT/scripts/netns/lib.sh"
netns_require
[ -x "$BIN" ] || { echo "two-host-test: $BIN is not built (run: swift build)" >&2; exit 1; }

# ---------------------------------------------------------------------------------------------
# Helpers

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

fail() { echo "    FAIL: $*" >&2; return 1; }

# wait_for FILE REGEX TIMEOUT_S — poll FILE until a line matches (an event, not a fixed sleep).
wait_for() {
    local file=$1 regex=$2 deadline=$(( $(now_ms) + ${3} * 1000 ))
    while [ "$(now_ms)" -lt "$deadline" ]; do
        grep -qE -- "$regex" "$file" 2>/dev/null && return 0
        sleep 0.02
    done
    grep -qE -- "$regex" "$file" 2>/dev/null
}

# wait_count FILE REGEX N TIMEOUT_S — until at least N lines match.
wait_count() {
    local file=$1 regex=$2 n=$3 deadline=$(( $(now_ms) + ${4} * 1000 ))
    while [ "$(now_ms)" -lt "$deadline" ]; do
        [ "$(grep -cE -- "$regex" "$file" 2>/dev/null)" -ge "$n" ] && return 0
        sleep 0.02
    done
    return 1
}

# FNV-1a 64 of the UTF-8 bytes of $1, as the subtype `_s` + 16 hex digits (Protocol.md §6). An
# independent implementation: bash arithmetic wraps at 64 bits like the Swift one.
subtype_of() {
    local h=$(( 0xcbf29ce484222325 )) b
    for b in $(printf '%s' "$1" | od -An -v -tu1); do
        h=$(( (h ^ b) * 0x100000001b3 ))
    done
    printf '_s%016x\n' "$h"
}

# How avahi-browse -p prints text inside a TXT string: bytes outside printable ASCII as \DDD.
avahi_escaped() {
    local b out=""
    for b in $(printf '%s' "$1" | od -An -v -tu1); do
        if [ "$b" -ge 32 ] && [ "$b" -lt 127 ]; then out+=$(printf "\\$(printf '%03o' "$b")"); else out+=$(printf '\\%03d' "$b"); fi
    done
    printf '%s\n' "$out"
}

# advertise HOST OUT SESSION NAME PORT — our own announcement; waits until it is registered.
advertise() {
    local h=$1 out=$2 session=$3 name=$4 port=$5
    host_spawn "$h" "$out" "$BIN" advertise --quiet --session "$session" --name "$name" --port "$port"
    wait_for "$out" '^registered ' 10 || { cat "$out" >&2; fail "advertise \"$name\" did not register on host $h"; return 1; }
    # The binary silences Avahi's compat warning itself (lib.sh removes AVAHI_COMPAT_NOWARN).
    ! grep -q 'WARNING' "$out" || { cat "$out" >&2; fail "the Bonjour compat warning was printed"; }
}

LOGS=""   # per-case scratch directory

# ---------------------------------------------------------------------------------------------
# Cases

# (a) Our registration, seen by a tool we did not write: type, subtype and TXT keys.
case_advertise_seen_by_avahi() {
    local session="3年B組 チーム2" sub; sub=$(subtype_of "$session")
    advertise A "$LOGS/adv" "$session" "robot a" 45001 || return 1
    grep -q "subtype $sub " "$LOGS/adv" || fail "advertise used another subtype than $sub: $(cat "$LOGS/adv")" || return 1
    host_run B timeout 10 avahi-browse -rpt "$sub._sub._analogremote._udp" > "$LOGS/browse" 2>&1 || true
    local line; line=$(grep -E '^=;[^;]*;IPv4;robot\\032a;_analogremote\._udp;local;' "$LOGS/browse" | head -1)
    [ -n "$line" ] || { cat "$LOGS/browse" >&2; fail "avahi-browse on B did not resolve \"robot a\" under subtype $sub"; return 1; }
    echo "$line" | grep -q ";$ADDR_A;45001;" || fail "wrong address or port: $line" || return 1
    local key
    for key in '"v=1"' "\"session=$(avahi_escaped "$session")\"" '"peer=' '"name=robot a"' '"failsafe=250"' '"rate=50"'; do
        [[ "$line" == *"$key"* ]] || { fail "TXT lacks $key: $line"; return 1; }
    done
    # And under the plain type too (every receiver, any session).
    host_run B timeout 10 avahi-browse -pt _analogremote._udp > "$LOGS/plain" 2>&1 || true
    grep -qE '^\+;[^;]*;IPv4;robot\\032a;_analogremote\._udp;local' "$LOGS/plain" \
        || { cat "$LOGS/plain" >&2; fail "not listed under _analogremote._udp"; return 1; }
    echo "    avahi-browse on B: \"robot a\" $ADDR_A:45001 subtype $sub, TXT v session peer name failsafe rate"
}

# (b) A receiver announced by hand with avahi-publish, as Protocol.md §6 shows, found by browse.
case_hand_published_found() {
    local session=KLabRemoteSample sub; sub=$(subtype_of "$session")
    host_spawn A "$LOGS/publish" avahi-publish -s "hand robot" _analogremote._udp 45002 \
        --sub "$sub._sub._analogremote._udp" v=1 "session=$session" peer=handmade "name=hand robot" failsafe=300 rate=40
    wait_for "$LOGS/publish" 'Established' 10 || { cat "$LOGS/publish" >&2; fail "avahi-publish did not establish"; return 1; }
    host_run B "$BIN" browse --quiet --session "$session" --once --timeout 3 > "$LOGS/found" 2>&1 || { cat "$LOGS/found" >&2; fail "browse failed"; return 1; }
    grep -qF "\"hand robot\" $ADDR_A:45002 v=1 peer=handmade failsafe=300 rate=40 if=$VETH_B" "$LOGS/found" \
        || { cat "$LOGS/found" >&2; fail "browse --once on B did not list the hand-published receiver"; return 1; }
    echo "    browse on B: $(head -1 "$LOGS/found")"
}

# (c) Isolation: two sessions on two hosts; each browse sees only its own. A foreign service
# published under our subtype (what a hash collision looks like) is ignored with a reason.
case_sessions_isolated() {
    advertise A "$LOGS/red" team-red robot-red 45011 || return 1
    advertise B "$LOGS/blue" team-blue robot-blue 45012 || return 1
    host_spawn A "$LOGS/impostor" avahi-publish -s impostor _analogremote._udp 45013 \
        --sub "$(subtype_of team-red)._sub._analogremote._udp" v=1 session=team-green peer=x
    wait_for "$LOGS/impostor" 'Established' 10 || { fail "avahi-publish (impostor) did not establish"; return 1; }
    host_spawn B "$LOGS/red-live" "$BIN" browse --quiet --session team-red
    local red_live=$SPAWNED
    host_run A "$BIN" browse --quiet --session team-blue --once --timeout 3 > "$LOGS/blue-once" 2>&1
    host_run B "$BIN" browse --quiet --session team-red --once --timeout 3 > "$LOGS/red-once" 2>&1
    host_stop "$red_live"
    grep -q '^"robot-red" ' "$LOGS/red-once" || { cat "$LOGS/red-once" >&2; fail "team-red browse on B missed robot-red"; return 1; }
    grep -q 'robot-blue\|impostor' "$LOGS/red-once" && { cat "$LOGS/red-once" >&2; fail "team-red browse listed a stranger"; return 1; }
    grep -q '^"robot-blue" ' "$LOGS/blue-once" || { cat "$LOGS/blue-once" >&2; fail "team-blue browse on A missed robot-blue"; return 1; }
    grep -q 'robot-red\|impostor' "$LOGS/blue-once" && { cat "$LOGS/blue-once" >&2; fail "team-blue browse listed a stranger"; return 1; }
    grep -q 'ignored "impostor": its session "team-green" is not "team-red"' "$LOGS/red-live" \
        || { cat "$LOGS/red-live" >&2; fail "the impostor under team-red's subtype was not reported as ignored"; return 1; }
    echo "    team-red on B: $(wc -l < "$LOGS/red-once") receiver(s); team-blue on A: $(wc -l < "$LOGS/blue-once"); impostor ignored"
}

# Following (what `control` will do, shown by `browse --follow`): the receiver restarts on another
# port, once stopped cleanly and once killed; the follower moves to the new port without a restart.
case_follow_new_port() {
    host_spawn B "$LOGS/follow" "$BIN" browse --quiet --session follow-test --follow
    local follower=$SPAWNED port
    advertise A "$LOGS/adv1" follow-test robot-f 45061 || return 1
    wait_for "$LOGS/follow" "follow \"robot-f\" $ADDR_A:45061 every 20 ms" 10 || { cat "$LOGS/follow" >&2; fail "not followed"; return 1; }
    local first=$SPAWNED signal=TERM round=0
    for port in 45062 45063; do
        round=$((round + 1))
        if [ "$signal" = TERM ]; then host_stop "$first"; else kill -KILL "$first"; wait "$first" 2>/dev/null || true; fi
        wait_count "$LOGS/follow" 'stop "robot-f": gone' "$round" 10 || { cat "$LOGS/follow" >&2; fail "loss (SIG$signal) not seen"; return 1; }
        grep -q 'state "robot-f" disconnected' "$LOGS/follow" || { fail "no disconnected state"; return 1; }
        local t0; t0=$(now_ms)
        advertise A "$LOGS/adv-$port" follow-test robot-f "$port" || return 1
        first=$SPAWNED
        wait_for "$LOGS/follow" "follow \"robot-f\" $ADDR_A:$port " 10 || { cat "$LOGS/follow" >&2; fail "did not follow to port $port"; return 1; }
        echo "    after SIG$signal: followed to port $port, $(( $(now_ms) - t0 )) ms after the restart"
        signal=KILL
    done
    host_stop "$follower"
    sed 's/^/      | /' "$LOGS/follow"
}

# Several receivers and no --receiver: list them and exit 6; with --receiver, exit 0.
case_ambiguous_exit_6() {
    advertise A "$LOGS/a1" amb-test amb-1 45071 || return 1
    advertise A "$LOGS/a2" amb-test amb-2 45072 || return 1
    local status=0
    host_run B "$BIN" browse --quiet --session amb-test --follow --once --timeout 5 > "$LOGS/out" 2> "$LOGS/err" || status=$?
    [ "$status" -eq 6 ] || { cat "$LOGS/out" "$LOGS/err" >&2; fail "exit status $status, expected 6"; return 1; }
    grep -q '^"amb-1" ' "$LOGS/out" && grep -q '^"amb-2" ' "$LOGS/out" || { cat "$LOGS/out" >&2; fail "the list lacks a receiver"; return 1; }
    grep -qx 'analog-remote: 2 receivers in session "amb-test" and none chosen: pick one with --receiver NAME' "$LOGS/err" \
        || { cat "$LOGS/err" >&2; fail "wrong message"; return 1; }
    host_run B "$BIN" browse --quiet --session amb-test --receiver amb-2 --once --timeout 2 > "$LOGS/named" 2>&1 \
        || { cat "$LOGS/named" >&2; fail "--receiver amb-2 failed"; return 1; }
    [ "$(wc -l < "$LOGS/named")" -eq 1 ] && grep -q '^"amb-2" ' "$LOGS/named" || { cat "$LOGS/named" >&2; fail "--receiver amb-2 did not pick amb-2"; return 1; }
    echo "    no name: exit 6 with both listed; --receiver amb-2: $(cat "$LOGS/named")"
}

# (d) The responder dies mid-session and comes back: browse reports it, browses again, and keeps
# the receiver that is still there (it must not be dropped when the 3 s refresh grace ends).
case_responder_restart() {
    advertise A "$LOGS/adv" restart-test robot-r 45021 || return 1
    local kept=$SPAWNED
    host_spawn B "$LOGS/live" "$BIN" browse --quiet --session restart-test
    local live=$SPAWNED
    wait_for "$LOGS/live" 'available "robot-r"' 10 || { cat "$LOGS/live" >&2; fail "not found before the restart"; return 1; }
    host_restart_avahi B
    wait_for "$LOGS/live" 'responder-lost' 10 || { cat "$LOGS/live" >&2; fail "responder loss not reported"; return 1; }
    wait_for "$LOGS/live" 'responder-back' 40 || { cat "$LOGS/live" >&2; fail "browse did not reconnect"; return 1; }
    local back; back=$(now_ms)
    advertise A "$LOGS/adv2" restart-test robot-r2 45022 || return 1
    wait_for "$LOGS/live" 'available "robot-r2"' 10 || { cat "$LOGS/live" >&2; fail "a new receiver was not seen after the restart"; return 1; }
    while [ "$(now_ms)" -lt $((back + 3500)) ]; do sleep 0.1; done     # past the refresh grace
    grep -q 'unavailable "robot-r"$' "$LOGS/live" && { cat "$LOGS/live" >&2; fail "robot-r was dropped although it is still there"; return 1; }
    host_stop "$kept"
    wait_for "$LOGS/live" 'unavailable "robot-r"$' 10 || { cat "$LOGS/live" >&2; fail "robot-r was not tracked after the restart"; return 1; }
    host_stop "$live"
    echo "    $(grep -E 'responder-(lost|back)' "$LOGS/live" | tr '\n' ';')"
}

# (e) Same name on both hosts: one of them is renamed, and says so.
case_name_clash() {
    advertise A "$LOGS/a" clash-test twin 45031 || return 1
    host_spawn B "$LOGS/b" "$BIN" advertise --quiet --session clash-test --name twin --port 45032
    wait_for "$LOGS/b" '^registered ' 15 || { cat "$LOGS/b" >&2; fail "second twin did not register"; return 1; }
    grep -q '^registered "twin #2" .*(renamed from "twin": the name was taken)' "$LOGS/b" \
        || { cat "$LOGS/b" >&2; fail "the clash was not reported as a rename"; return 1; }
    echo "    $(cat "$LOGS/b")"
}

# (f) Discovery time. "browse start": the receiver is already announced, a fresh browse starts
# on B; time until its first `available` line (process start included). "announce": browse
# runs on B, the receiver starts on A; time until B lists it (includes mDNS probing, ~0.75 s).
case_discovery_time() {
    advertise A "$LOGS/adv" timing-test robot-t 45041 || return 1
    local i t0 t1 times=() run
    for i in 1 2 3 4 5; do
        run="$LOGS/cold$i"
        t0=$(now_ms)
        host_spawn B "$run" "$BIN" browse --quiet --session timing-test
        wait_for "$run" 'available "robot-t"' 10 || { cat "$run" >&2; fail "run $i: not found"; return 1; }
        t1=$(now_ms)
        times+=($((t1 - t0)))
        host_stop "$SPAWNED"
    done
    echo "    browse start → available (ms, 5 runs, incl. process start): ${times[*]}"
    local inner; inner=$(for i in 1 2 3 4 5; do awk '/available "robot-t"/{print $1; exit}' "$LOGS/cold$i"; done | tr '\n' ' ')
    echo "    same, measured inside browse (s):                           $inner"
    local announce=()
    for i in 1 2 3; do
        run="$LOGS/warm$i"
        host_spawn B "$run" "$BIN" browse --quiet --session "timing-$i"
        local browser=$SPAWNED
        sleep 0.3   # let the browse start; the measurement starts at the announcement below
        t0=$(now_ms)
        host_spawn A "$LOGS/adv$i" "$BIN" advertise --quiet --session "timing-$i" --name "robot-$i" --port $((45050 + i))
        local adv=$SPAWNED
        wait_for "$run" "available \"robot-$i\"" 10 || { cat "$run" >&2; fail "announce run $i: not found"; return 1; }
        t1=$(now_ms)
        announce+=($((t1 - t0)))
        host_stop "$browser"; host_stop "$adv"
    done
    echo "    advertise start → available on B (ms, 3 runs): ${announce[*]}"
    local worst=0 t
    for t in "${times[@]}"; do [ "$t" -gt "$worst" ] && worst=$t; done
    DISCOVERY_SUMMARY="discovery: browse start → receiver available in ${times[*]} ms; new receiver visible after ${announce[*]} ms"
    [ "$worst" -lt 3000 ] || { fail "discovery took $worst ms (more than 3 s)"; return 1; }
}

# Classroom (Protocol.md §7.6): a teacher's stop-all across the two hosts. One receiver per host
# (simulated board, teacher key), announced in a session; each is driven from the other host. A
# stop-all from A finds both by DNS-SD and stops them; they stay stopped while their controllers
# keep sending forward; a wrong key is refused; --release lets them go (after a resting state).
# Times: stop-all start → each board at motors 0 (incl. process start and the DNS-SD browse),
# and the same by --peer (no DNS-SD).
case_stop_all_two_hosts() {
    local session=stop-all-test key=teach3r h port ports=() recv=() t0 t1 t2
    printf '0 0 none\n100 0 forward\n600000 0 forward\n' > "$LOGS/drive.script"
    # After the release the old controllers stop; the new ones rest until the old owner has lapsed
    # (failsafe 1 s), so they take over, and then drive.
    printf '0 0 none\n1500 0 forward\n600000 0 forward\n' > "$LOGS/again.script"
    for h in A B; do
        host_spawn "$h" "$LOGS/recv-$h" "$BIN" receive --quiet --no-advertise --board sim --trace-board \
            --teacher-key "$key" --failsafe-ms 1000
        recv+=("$LOGS/recv-$h")
        wait_for "$LOGS/recv-$h" '^receiving on udp port [0-9]+$' 10 || { cat "$LOGS/recv-$h" >&2; fail "receiver on $h did not start"; return 1; }
        port=$(sed -n 's/^receiving on udp port \([0-9]*\)$/\1/p' "$LOGS/recv-$h" | head -1)
        ports+=("$port")
        advertise "$h" "$LOGS/adv-$h" "$session" "robot-$h" "$port" || return 1
    done
    # Controllers cross over: B drives A's robot, A drives B's.
    host_spawn B "$LOGS/ctl-A" "$BIN" control --quiet --peer "$ADDR_A:${ports[0]}" --input "script:$LOGS/drive.script"
    local ctl_a=$SPAWNED
    host_spawn A "$LOGS/ctl-B" "$BIN" control --quiet --peer "$ADDR_B:${ports[1]}" --input "script:$LOGS/drive.script"
    local ctl_b=$SPAWNED
    local forward='^map .{68}c040$' stopped='^map .{68}0000$'
    for h in 0 1; do
        wait_for "${recv[$h]}" "$forward" 10 || { cat "${recv[$h]}" >&2; fail "robot $h never drove"; return 1; }
    done

    # A wrong key: refused by both, said so, robots still driving.
    local status=0
    host_run A "$BIN" stop-all --quiet --session "$session" --teacher-key wrong --timeout 3 > "$LOGS/wrong" 2>&1 || status=$?
    [ "$status" -eq 1 ] && [ "$(grep -c '^refused by .*wrong teacher key' "$LOGS/wrong")" -eq 2 ] \
        || { cat "$LOGS/wrong" >&2; fail "a wrong key was not refused by both (exit $status)"; return 1; }
    for h in 0 1; do
        tail -n 1 <(grep '^map ' "${recv[$h]}") | grep -qE "$forward" || { fail "robot $h stopped on a wrong key"; return 1; }
    done

    # The right key, found by DNS-SD. (Map lines are counted: the start-up map is at rest too.)
    local s0 s1
    s0=$(grep -cE "$stopped" "${recv[0]}"); s1=$(grep -cE "$stopped" "${recv[1]}")
    t0=$(now_ms)
    host_spawn A "$LOGS/stop" "$BIN" stop-all --quiet --session "$session" --teacher-key "$key" --timeout 3
    local stopper=$SPAWNED
    wait_count "${recv[0]}" "$stopped" $((s0 + 1)) 10 || { cat "${recv[0]}" >&2; fail "robot A did not stop"; return 1; }
    t1=$(now_ms)
    wait_count "${recv[1]}" "$stopped" $((s1 + 1)) 10 || { cat "${recv[1]}" >&2; fail "robot B did not stop"; return 1; }
    t2=$(now_ms)
    wait "$stopper" 2>/dev/null || true
    grep -q '^stopped "robot-A" ' "$LOGS/stop" && grep -q '^stopped "robot-B" ' "$LOGS/stop" && grep -q '^reached 2 of 2 receivers$' "$LOGS/stop" \
        || { cat "$LOGS/stop" >&2; fail "stop-all did not report both receivers"; return 1; }
    # Held for a second while the controllers keep sending forward at 50 Hz.
    local lines=() n
    for h in 0 1; do lines+=("$(grep -c '^map ' "${recv[$h]}")"); done
    sleep 1
    for h in 0 1; do
        n=$(grep -c '^map ' "${recv[$h]}")
        [ "$n" -eq "${lines[$h]}" ] || { tail -n 3 "${recv[$h]}" >&2; fail "robot $h moved while stopped"; return 1; }
        grep -q 'STOPPED BY TEACHER' "${recv[$h]}" || { fail "robot $h did not log the stop"; return 1; }
    done

    # Release by DNS-SD; the old controllers (still forward) do not restart the robots; new ones
    # that start at rest do.
    host_run A "$BIN" stop-all --quiet --session "$session" --teacher-key "$key" --release --timeout 3 > "$LOGS/release" 2>&1 \
        || { cat "$LOGS/release" >&2; fail "release failed"; return 1; }
    [ "$(grep -c '^released ' "$LOGS/release")" -eq 2 ] || { cat "$LOGS/release" >&2; fail "release did not reach both"; return 1; }
    local f0 f1
    f0=$(grep -cE "$forward" "${recv[0]}"); f1=$(grep -cE "$forward" "${recv[1]}")
    sleep 0.5
    [ "$(grep -cE "$forward" "${recv[0]}")" -eq "$f0" ] && [ "$(grep -cE "$forward" "${recv[1]}")" -eq "$f1" ] \
        || { fail "a robot resumed on a moving state after the release"; return 1; }
    host_stop "$ctl_a"; host_stop "$ctl_b"
    host_spawn B "$LOGS/ctl2-A" "$BIN" control --quiet --peer "$ADDR_A:${ports[0]}" --input "script:$LOGS/again.script"
    host_spawn A "$LOGS/ctl2-B" "$BIN" control --quiet --peer "$ADDR_B:${ports[1]}" --input "script:$LOGS/again.script"
    wait_count "${recv[0]}" "$forward" $((f0 + 1)) 10 && wait_count "${recv[1]}" "$forward" $((f1 + 1)) 10 \
        || { tail -n 5 "${recv[0]}" "${recv[1]}" >&2; fail "the robots did not drive again after the release"; return 1; }

    # The same stop by --peer, without DNS-SD: only the time to reach the boards.
    local t3 t4 t5 n0 n1
    n0=$(grep -cE "$stopped" "${recv[0]}"); n1=$(grep -cE "$stopped" "${recv[1]}")
    t3=$(now_ms)
    host_spawn A "$LOGS/stop-peer" "$BIN" stop-all --quiet --session "$session" --teacher-key "$key" \
        --peer "$ADDR_A:${ports[0]}" --peer "$ADDR_B:${ports[1]}"
    wait_count "${recv[0]}" "$stopped" $((n0 + 1)) 10 || { tail -n 5 "${recv[0]}" "$LOGS/stop-peer" >&2; fail "robot A did not stop (--peer)"; return 1; }
    t4=$(now_ms)
    wait_count "${recv[1]}" "$stopped" $((n1 + 1)) 10 || { fail "robot B did not stop (--peer)"; return 1; }
    t5=$(now_ms)
    STOP_ALL_SUMMARY="stop-all: boards at motors 0 after $((t1 - t0)) and $((t2 - t0)) ms (DNS-SD, incl. process start); $((t4 - t3)) and $((t5 - t3)) ms by --peer"
    echo "    $STOP_ALL_SUMMARY"
    [ $((t5 - t3)) -lt 2000 ] || { fail "stop-all by --peer took $((t5 - t3)) ms"; return 1; }
}
CASES+=(stop_all_two_hosts)

# ---------------------------------------------------------------------------------------------

netns_setup
echo "two-host-test: hosts A=$ADDR_A ($NS_A) and B=$ADDR_B ($NS_B) up; binary $BIN"
selected=("$@"); [ ${#selected[@]} -gt 0 ] || selected=("${CASES[@]}")
passed=0; failed=0; failures=()
DISCOVERY_SUMMARY=""
for c in "${selected[@]}"; do
    declare -F "case_$c" >/dev/null || { echo "two-host-test: no case '$c' (cases: ${CASES[*]})" >&2; exit 2; }
    LOGS="$STATE_ROOT/case-$c"; mkdir -p "$LOGS"
    echo "--- $c"
    start=$(now_ms)
    # Not in a subshell: the pids it spawns must reach netns_cleanup. errexit is off inside an
    # `if` condition, so every case checks its own steps (`|| return 1`).
    if "case_$c"; then
        echo "PASS $c ($(( $(now_ms) - start )) ms)"; passed=$((passed + 1))
    else
        echo "FAIL $c"; failed=$((failed + 1)); failures+=("$c")
    fi
    host_stop_all
done
[ -n "$DISCOVERY_SUMMARY" ] && echo "$DISCOVERY_SUMMARY"
[ -n "${STOP_ALL_SUMMARY:-}" ] && echo "$STOP_ALL_SUMMARY"
echo "two-host-test: $passed passed, $failed failed${failures:+ (${failures[*]})}"
[ "$failed" -eq 0 ]
