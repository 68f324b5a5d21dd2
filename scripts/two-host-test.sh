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
# The last line is the summary CI reads, `two-host: N passed, M failed`; the exit status is
# non-zero when a case failed.
#
# Adding a case: write `case_NAME() { … }` using host_spawn/host_run/wait_for, return non-zero on
# failure (print why with `fail`), and append NAME to CASES below.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${ANALOG_REMOTE:-$ROOT/.build/debug/analog-remote}
# The real commands first: receive + control across the link, then discovery on its own.
CASES=(readme_two_machines board_follows control_sessions_isolated control_follows_restart known_receiver_follows_restart responders_die_robot_drives
       clean_restart_robot_drives
       advertise_seen_by_avahi hand_published_found sessions_isolated follow_new_port ambiguous_exit_6
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

# receiver HOST OUT SESSION NAME PORT — `receive` with the simulated board, which prints its
# whole memory map (`map <72 hex digits>`) on stdout after every change; waits until announced.
receiver() {
    local h=$1 out=$2 session=$3 name=$4 port=$5
    host_spawn "$h" "$out" "$BIN" receive --session "$session" --name "$name" --port "$port" --board sim --trace-board
    wait_for "$out" '^notice: announced as ' 10 || { cat "$out" >&2; fail "receiver \"$name\" was not announced on host $h"; return 1; }
}

# controller HOST OUT FD ARGS… — `control --input stdin ARGS…` reading a FIFO that this script
# writes through descriptor FD (7 or 8): `feed FD STATE`, and `end_feed FD` for end of input.
controller() {
    local h=$1 out=$2 fd=$3; shift 3
    mkfifo "$out.in"
    SPAWN_STDIN="$out.in" host_spawn "$h" "$out" "$BIN" control --input stdin "$@"
    eval "exec $fd>\"\$out.in\""      # meets the controller's open of the FIFO
}
feed() { local fd=$1; shift; echo "$*" >&"$fd"; }
end_feed() { eval "exec $1>&-"; }

# The memory map addresses the kit mapping drives: LED 1 = 0x0F (button a), LED 2 = 0x10
# (button b), motors = 0x22 0x23. As regexes on the last `map` line: hex digit 2×address.
MAP_LED1='^map .{30}ff'; MAP_LED2='^map .{32}ff'; MAP_LED1_OFF='^map .{30}00'; MAP_REST='^map 0{72}$'

# wait_map FILE REGEX TIMEOUT_S — until the board's latest memory map matches.
wait_map() {
    local file=$1 regex=$2 deadline=$(( $(now_ms) + ${3} * 1000 ))
    while [ "$(now_ms)" -lt "$deadline" ]; do
        grep '^map ' "$file" 2>/dev/null | tail -1 | grep -qE -- "$regex" && return 0
        sleep 0.01
    done
    return 1
}

# reap PID — waits for a spawned process; its exit status lands in $REAPED. (Not through $(…):
# a subshell cannot wait for its parent's children.)
reap() { REAPED=0; wait "$1" 2>/dev/null || REAPED=$?; }

LOGS=""   # per-case scratch directory

# ---------------------------------------------------------------------------------------------
# Cases

# The whole path: `receive --board sim` on A, `control --session` on B fed states on stdin; the
# board's memory map follows. Discovery time = controller start → first state applied on the
# board (LED 1 lit by "0 a"), three controller starts without --receiver (they wait out the
# 0.5 s settle window, Protocol.md §6.4) and two with it.
case_board_follows() {
    local session=class-3b i t0 t1 times=() named=() out ctl
    receiver A "$LOGS/recv" "$session" robot-a 46001 || return 1
    grep -q 'notice: announced as "robot-a" in session "class-3b"' "$LOGS/recv" || { cat "$LOGS/recv" >&2; fail "no announcement line"; return 1; }
    for i in 1 2 3 4 5; do
        out="$LOGS/ctl$i"
        local extra=(); [ "$i" -gt 3 ] && extra=(--receiver robot-a)
        t0=$(now_ms)
        controller B "$out" 7 --session "$session" "${extra[@]}"
        ctl=$SPAWNED
        feed 7 "0 a"
        wait_map "$LOGS/recv" "$MAP_LED1" 10 || { cat "$out" "$LOGS/recv" >&2; fail "run $i: LED 1 did not light (state \"0 a\")"; return 1; }
        t1=$(now_ms)
        if [ "$i" -gt 3 ]; then named+=($((t1 - t0))); else times+=($((t1 - t0))); fi
        if [ "$i" -eq 1 ]; then
            feed 7 "0.3 forward"
            wait_map "$LOGS/recv" '^map .{68}aa2a$' 5 || { cat "$LOGS/recv" >&2; fail "motors did not follow \"0.3 forward\" (want 22=aa 23=2a)"; return 1; }
            feed 7 "0 none"
            wait_map "$LOGS/recv" "$MAP_REST" 5 || { cat "$LOGS/recv" >&2; fail "the board did not come to rest on \"0 none\""; return 1; }
            feed 7 "0 a"
        fi
        end_feed 7
        reap "$ctl"
        [ "$REAPED" -eq 0 ] || { cat "$out" >&2; fail "run $i: control exited $REAPED at end of input"; return 1; }
        wait_map "$LOGS/recv" "$MAP_LED1_OFF" 5 || { cat "$LOGS/recv" >&2; fail "run $i: the neutral state on the way out did not reach the board"; return 1; }
        grep -q 'notice: receiver "robot-a" connected' "$out" || { cat "$out" >&2; fail "run $i: no \"connected\" peer state in the controller's log"; return 1; }
        # The next controller is another source: it may drive once this one is silent for the
        # receiver's failsafe (--accept first).
        # (The controller says bye on its way out, so the robot is free at once.)
        wait_count "$LOGS/recv" 'owner silent|owner said bye' "$i" 5 || { cat "$LOGS/recv" >&2; fail "run $i: the receiver did not free the robot"; return 1; }
    done
    grep -q "sending to \"robot-a\" at $ADDR_A:46001 every 20 ms (the receiver's rate)" "$LOGS/ctl1" \
        || { cat "$LOGS/ctl1" >&2; fail "the controller did not follow the receiver's timing contract"; return 1; }
    sed 's/^/      | /' "$LOGS/ctl1"
    echo "    controller start → first state on the board (ms): ${times[*]}; with --receiver: ${named[*]}"
    DISCOVERY_SUMMARY+="discovery: control start → state on the board in ${times[*]} ms (--receiver: ${named[*]} ms)"$'\n'
    local worst=0 t
    for t in "${times[@]}" "${named[@]}"; do [ "$t" -gt "$worst" ] && worst=$t; done
    [ "$worst" -lt 3000 ] || { fail "discovery took $worst ms (more than 3 s)"; return 1; }
}

# The README's "Two machines, one session" example, run as written (the lines are read from
# README.md; only the board is the simulated one, `--board sim --trace-board`, and the README's
# example address is host A's): the receiver on its default port 27183, `control --session`, and
# `control --peer HOST` with no port. Each drives the board and ends with status 0 (it heard back).
case_readme_two_machines() {
    local readme="$ROOT/README.md" recv_line session_line peer_line
    recv_line=$(grep -m1 -E '^analog-remote receive --session class-3b --board serial:/dev/ttyACM0$' "$readme") \
        || { fail "README lacks the receiver line of the two-machine example"; return 1; }
    session_line=$(grep -m1 -E '^analog-remote control --session class-3b$' "$readme") \
        || { fail "README lacks the control --session line"; return 1; }
    peer_line=$(grep -m1 -E '^analog-remote control --peer 192\.168\.1\.7$' "$readme") \
        || { fail "README lacks the control --peer HOST line"; return 1; }
    local recv_args ctl_args
    read -r -a recv_args <<< "${recv_line#analog-remote }"
    recv_args=("${recv_args[@]/serial:\/dev\/ttyACM0/sim}")
    host_spawn A "$LOGS/recv" "$BIN" "${recv_args[@]}" --trace-board
    local recv=$SPAWNED
    wait_for "$LOGS/recv" '^receiving on udp port 27183$' 10 || { cat "$LOGS/recv" >&2; fail "the receiver is not on port 27183"; return 1; }
    wait_for "$LOGS/recv" '^notice: announced as ' 10 || { cat "$LOGS/recv" >&2; fail "the receiver was not announced"; return 1; }
    local run line out ctl
    for run in session peer; do
        if [ "$run" = session ]; then line=$session_line; else line=${peer_line/192.168.1.7/$ADDR_A}; fi
        read -r -a ctl_args <<< "${line#analog-remote }"
        out="$LOGS/ctl-$run"
        mkfifo "$out.in"
        SPAWN_STDIN="$out.in" host_spawn B "$out" "$BIN" "${ctl_args[@]}"
        ctl=$SPAWNED
        exec 7>"$out.in"
        feed 7 "0 a"
        wait_map "$LOGS/recv" "$MAP_LED1" 10 || { cat "$out" "$LOGS/recv" >&2; fail "$line: LED 1 did not light"; return 1; }
        feed 7 "0.3 forward"
        wait_map "$LOGS/recv" '^map .{68}aa2a$' 5 || { cat "$out" "$LOGS/recv" >&2; fail "$line: the motors did not follow"; return 1; }
        end_feed 7
        reap "$ctl"
        [ "$REAPED" -eq 0 ] || { cat "$out" >&2; fail "$line: exited $REAPED at end of input"; return 1; }
        wait_map "$LOGS/recv" "$MAP_REST" 5 || { cat "$LOGS/recv" >&2; fail "$line: the board is not at rest after the controller left"; return 1; }
        echo "    ran: $line"
    done
    kill -TERM "$recv" 2>/dev/null; reap "$recv"
    [ "$REAPED" -eq 0 ] || { cat "$LOGS/recv" >&2; fail "the receiver exited $REAPED"; return 1; }
}

# Isolation with the real commands: two receivers in two sessions on A, one controller per
# session on B at the same time; each board shows only its own controller's state.
case_control_sessions_isolated() {
    receiver A "$LOGS/red" team-red robot-red 46011 || return 1
    receiver A "$LOGS/blue" team-blue robot-blue 46012 || return 1
    controller B "$LOGS/ctl-red" 7 --session team-red
    local red=$SPAWNED
    controller B "$LOGS/ctl-blue" 8 --session team-blue
    local blue=$SPAWNED
    feed 7 "0 a"; feed 8 "0 b"
    wait_map "$LOGS/red" "$MAP_LED1" 10 || { cat "$LOGS/ctl-red" "$LOGS/red" >&2; fail "robot-red did not show its controller's state"; return 1; }
    wait_map "$LOGS/blue" "$MAP_LED2" 10 || { cat "$LOGS/ctl-blue" "$LOGS/blue" >&2; fail "robot-blue did not show its controller's state"; return 1; }
    end_feed 7; end_feed 8
    reap "$red"; [ "$REAPED" -eq 0 ] || { cat "$LOGS/ctl-red" >&2; fail "team-red's controller exited $REAPED"; return 1; }
    reap "$blue"; [ "$REAPED" -eq 0 ] || { cat "$LOGS/ctl-blue" >&2; fail "team-blue's controller exited $REAPED"; return 1; }
    host_stop_all
    grep -qE "$MAP_LED2" "$LOGS/red" && { cat "$LOGS/red" >&2; fail "robot-red showed team-blue's state"; return 1; }
    grep -qE "$MAP_LED1" "$LOGS/blue" && { cat "$LOGS/blue" >&2; fail "robot-blue showed team-red's state"; return 1; }
    grep -q 'robot-blue' "$LOGS/ctl-red" && { cat "$LOGS/ctl-red" >&2; fail "team-red's controller saw robot-blue"; return 1; }
    grep -q 'robot-red' "$LOGS/ctl-blue" && { cat "$LOGS/ctl-blue" >&2; fail "team-blue's controller saw robot-red"; return 1; }
    grep -q '^summary .* sources=1 ' "$LOGS/red" && grep -q '^summary .* sources=1 ' "$LOGS/blue" \
        || { cat "$LOGS/red" "$LOGS/blue" >&2; fail "a receiver heard more than one controller"; return 1; }
    echo "    robot-red: $(grep '^summary' "$LOGS/red" | cut -d' ' -f2); robot-blue: $(grep '^summary' "$LOGS/blue" | cut -d' ' -f2); one source each"
}

# Follow with the real commands: the receiver restarts on another port (once stopped, once
# killed) while one controller keeps running; its packets reach each new receiver.
case_control_follows_restart() {
    receiver A "$LOGS/r46021" follow-c robot-f 46021 || return 1
    local current=$SPAWNED port signal=TERM round=0 t0
    controller B "$LOGS/ctl" 7 --session follow-c
    local ctl=$SPAWNED
    feed 7 "0 a"
    wait_map "$LOGS/r46021" "$MAP_LED1" 10 || { cat "$LOGS/ctl" >&2; fail "the first receiver was not driven"; return 1; }
    for port in 46022 46023; do
        round=$((round + 1))
        if [ "$signal" = TERM ]; then host_stop "$current"; else kill -KILL "$current"; wait "$current" 2>/dev/null || true; fi
        wait_count "$LOGS/ctl" 'receiver "robot-f" disconnected' "$round" 10 || { cat "$LOGS/ctl" >&2; fail "the controller did not see the receiver go (SIG$signal)"; return 1; }
        t0=$(now_ms)
        receiver A "$LOGS/r$port" follow-c robot-f "$port" || return 1
        current=$SPAWNED
        wait_map "$LOGS/r$port" "$MAP_LED1" 10 || { cat "$LOGS/ctl" "$LOGS/r$port" >&2; fail "the controller's state did not reach the receiver on port $port"; return 1; }
        echo "    after SIG$signal: the receiver on port $port shows the controller's state $(( $(now_ms) - t0 )) ms after it started"
        grep -q "sending to \"robot-f\" at $ADDR_A:$port " "$LOGS/ctl" || { cat "$LOGS/ctl" >&2; fail "no 'sending to' port $port"; return 1; }
        signal=KILL
    done
    pid_is "$ctl" analog-remote || { cat "$LOGS/ctl" >&2; fail "the controller did not keep running"; return 1; }
    end_feed 7
    reap "$ctl"; [ "$REAPED" -eq 0 ] || { cat "$LOGS/ctl" >&2; fail "control exited $REAPED"; return 1; }
    sed 's/^/      | /' "$LOGS/ctl"
}

# The same with `--receiver NAME` (Protocol.md §6.4, "A known receiver"): the controller never
# browses; it resolves robot-k's instance directly, and when the receiver restarts on another port
# (stopped, then killed) it finds the new port (the receiver stopped answering, so it resolves the
# name again; or its watch on the name saw the goodbye and the new registration) and drives it.
case_known_receiver_follows_restart() {
    receiver A "$LOGS/r46051" known-k robot-k 46051 || return 1
    local current=$SPAWNED port signal=TERM t0 round=0
    controller B "$LOGS/ctl" 7 --session known-k --receiver robot-k --log-level debug
    local ctl=$SPAWNED
    feed 7 "0 a"
    wait_map "$LOGS/r46051" "$MAP_LED1" 10 || { cat "$LOGS/ctl" >&2; fail "the first receiver was not driven"; return 1; }
    grep -q 'discovery: found' "$LOGS/ctl" || { cat "$LOGS/ctl" >&2; fail "no discovery events in the debug log"; return 1; }
    # Found by the direct resolve: the session's browse (a fallback) never started, so no other
    # instance was ever reported.
    grep 'discovery: found' "$LOGS/ctl" | grep -vq '"robot-k \[' && { cat "$LOGS/ctl" >&2; fail "the controller reported an instance other than robot-k"; return 1; }
    for port in 46052 46053; do
        if [ "$signal" = TERM ]; then host_stop "$current"; else kill -KILL "$current"; wait "$current" 2>/dev/null || true; fi
        t0=$(now_ms)
        receiver A "$LOGS/r$port" known-k robot-k "$port" || return 1
        current=$SPAWNED
        wait_map "$LOGS/r$port" "$MAP_LED1" 15 || { cat "$LOGS/ctl" "$LOGS/r$port" >&2; fail "the controller did not find robot-k on port $port"; return 1; }
        echo "    after SIG$signal: robot-k on port $port shows the controller's state $(( $(now_ms) - t0 )) ms after it started"
        grep -qE "(sending to \"robot-k\" at|moved from [^ ]* to) [^ ]*:$port( |:|$)" "$LOGS/ctl" \
            || { cat "$LOGS/ctl" >&2; fail "no 'sending to' port $port"; return 1; }
        # A restarted receiver (a new peer id) knows no connection: the controller says hello
        # again and is accepted, so it hears the robot's state (Protocol.md §6.4).
        round=$((round + 1))
        wait_count "$LOGS/ctl" 'accepted by "robot-k"' "$((round + 1))" 10 \
            || { cat "$LOGS/ctl" >&2; fail "the controller was not accepted again by robot-k on port $port"; return 1; }
        signal=KILL
    done
    pid_is "$ctl" analog-remote || { cat "$LOGS/ctl" >&2; fail "the controller did not keep running"; return 1; }
    # A second "robot-k" in the same session is renamed "robot-k #2"; a driver asking for
    # robot-k is told at once (the rename probe), without a browse.
    receiver B "$LOGS/twin" known-k robot-k 46059 || return 1
    grep -q 'announced as "robot-k #2"' "$LOGS/twin" || { cat "$LOGS/twin" >&2; fail "the second robot-k was not renamed"; return 1; }
    controller A "$LOGS/ctl2" 8 --session known-k --receiver robot-k
    local ctl2=$SPAWNED
    wait_for "$LOGS/ctl2" 'receiver "robot-k #2" is in session "known-k" under a new name' 10 \
        || { cat "$LOGS/ctl2" >&2; fail "the driver was not told of the rename"; return 1; }
    end_feed 8
    reap "$ctl2"
    end_feed 7
    reap "$ctl"; [ "$REAPED" -eq 0 ] || { cat "$LOGS/ctl" >&2; fail "control exited $REAPED"; return 1; }
    grep -v 'discovery:\|debug:' "$LOGS/ctl" | sed 's/^/      | /'
    grep 'under a new name' "$LOGS/ctl2" | sed 's/^/      | /'
}

# Both responders die mid-session: the robot keeps driving (the controller keeps sending, the
# receiver keeps its controller), both say so, and the receiver is announced again. The
# receiver's responder crashes (SIGKILL): a clean stop would send goodbyes for its services, and
# a controller stops sending to a receiver that said goodbye (Protocol.md §6.4).
case_responders_die_robot_drives() {
    receiver A "$LOGS/recv" rr-test robot-r 46031 || return 1
    controller B "$LOGS/ctl" 7 --session rr-test
    local ctl=$SPAWNED
    feed 7 "0 a"
    wait_map "$LOGS/recv" "$MAP_LED1" 10 || { cat "$LOGS/ctl" >&2; fail "not driven before the restart"; return 1; }
    host_restart_avahi A KILL
    host_restart_avahi B
    wait_for "$LOGS/recv" 'the mDNS responder went away' 10 || { cat "$LOGS/recv" >&2; fail "the receiver did not report the lost responder"; return 1; }
    wait_for "$LOGS/ctl" 'the mDNS responder went away \(still sending to "robot-r"' 10 \
        || { cat "$LOGS/ctl" >&2; fail "the controller did not report the lost responder, or stopped sending"; return 1; }
    feed 7 "0 b"
    wait_map "$LOGS/recv" "$MAP_LED2" 5 || { cat "$LOGS/recv" >&2; fail "the robot stopped following while mDNS was down"; return 1; }
    wait_count "$LOGS/recv" 'notice: announced as "robot-r"' 2 20 || { cat "$LOGS/recv" >&2; fail "the receiver was not announced again"; return 1; }
    wait_for "$LOGS/ctl" 'the mDNS responder is back' 20 || { cat "$LOGS/ctl" >&2; fail "the controller did not browse again"; return 1; }
    # Past the 3 s refresh grace: the receiver, announced again, is still the one driven.
    sleep 3.5
    grep -q 'receiver "robot-r" disconnected' "$LOGS/ctl" && { cat "$LOGS/ctl" >&2; fail "the controller dropped the receiver after the restart"; return 1; }
    feed 7 "0 a"
    wait_map "$LOGS/recv" "$MAP_LED1" 5 || { cat "$LOGS/recv" >&2; fail "not driven after the restart"; return 1; }
    end_feed 7
    reap "$ctl"; [ "$REAPED" -eq 0 ] || { cat "$LOGS/ctl" >&2; fail "control exited $REAPED"; return 1; }
    grep -E 'mDNS responder|announced as' "$LOGS/recv" "$LOGS/ctl" | sed "s|$LOGS/||; s/^/      | /"
}

# A clean restart of avahi-daemon on the robot's host: it says goodbye for the receiver's name, but
# the receiver still answers the controller's pings, so the controller keeps sending and the robot
# never stops (no failsafe trip) while its name is away; it is announced again and still driven.
case_clean_restart_robot_drives() {
    receiver A "$LOGS/recv" cr-test robot-c 46041 || return 1
    controller B "$LOGS/ctl" 7 --session cr-test
    local ctl=$SPAWNED
    feed 7 "0 a"
    wait_map "$LOGS/recv" "$MAP_LED1" 10 || { cat "$LOGS/ctl" >&2; fail "not driven before the restart"; return 1; }
    wait_for "$LOGS/ctl" 'accepted by' 10 || { cat "$LOGS/ctl" >&2; fail "the receiver did not accept the controller"; return 1; }
    local before; before=$(wc -l < "$LOGS/recv")
    host_restart_avahi A
    wait_for "$LOGS/ctl" 'withdrew its announcement but answered .* still sending to' 10 \
        || { cat "$LOGS/ctl" >&2; fail "the controller did not keep sending after the goodbye"; return 1; }
    feed 7 "0 b"
    wait_map "$LOGS/recv" "$MAP_LED2" 5 || { cat "$LOGS/recv" >&2; fail "the robot stopped following while its name was away"; return 1; }
    wait_count "$LOGS/recv" 'notice: announced as "robot-c"' 2 20 || { cat "$LOGS/recv" >&2; fail "the receiver was not announced again"; return 1; }
    feed 7 "0 a"
    wait_map "$LOGS/recv" "$MAP_LED1" 5 || { cat "$LOGS/recv" >&2; fail "not driven after the restart"; return 1; }
    # Not `tail | grep -q`: under pipefail tail's SIGPIPE would read as "no FAILSAFE line".
    grep -q 'FAILSAFE' < <(tail -n +"$((before + 1))" "$LOGS/recv") && { cat "$LOGS/recv" >&2; fail "the failsafe tripped during the restart"; return 1; }
    grep -q 'is gone: stopped sending' "$LOGS/ctl" && { cat "$LOGS/ctl" >&2; fail "the controller stopped sending"; return 1; }
    end_feed 7
    reap "$ctl"; [ "$REAPED" -eq 0 ] || { cat "$LOGS/ctl" >&2; fail "control exited $REAPED"; return 1; }
    grep -E 'withdrew|announced as' "$LOGS/recv" "$LOGS/ctl" | sed "s|$LOGS/||; s/^/      | /"
}

# (a) Our registration, seen by a tool we did not write: type, subtype and TXT keys.
case_advertise_seen_by_avahi() {
    local session="3年B組 チーム2" sub; sub=$(subtype_of "$session")
    advertise A "$LOGS/adv" "$session" "robot a" 45001 || return 1
    grep -q "subtype $sub " "$LOGS/adv" || fail "advertise used another subtype than $sub: $(cat "$LOGS/adv")" || return 1
    host_run B timeout 10 avahi-browse -rpt "$sub._sub._analogremote._udp" > "$LOGS/browse" 2>&1 || true
    # The instance name is the display name and the session's mark (Protocol.md §6.1):
    # "robot a [81934f49]", which avahi-browse -p escapes byte by byte (space \032, [ \091, ] \093).
    local inst="robot\\\\032a\\\\032\\\\091${sub:2:8}\\\\093"
    local line; line=$(grep -m1 -E "^=;[^;]*;IPv4;$inst;_analogremote\\._udp;local;" "$LOGS/browse" || true)
    [ -n "$line" ] || { cat "$LOGS/browse" >&2; fail "avahi-browse on B did not resolve \"robot a\" under subtype $sub"; return 1; }
    echo "$line" | grep -q ";$ADDR_A;45001;" || fail "wrong address or port: $line" || return 1
    local key
    for key in '"v=1"' "\"session=$(avahi_escaped "$session")\"" '"peer=' '"name=robot a"' '"failsafe=250"' '"rate=50"'; do
        [[ "$line" == *"$key"* ]] || { fail "TXT lacks $key: $line"; return 1; }
    done
    # And under the plain type too (every receiver, any session).
    host_run B timeout 10 avahi-browse -pt _analogremote._udp > "$LOGS/plain" 2>&1 || true
    grep -qE "^\\+;[^;]*;IPv4;$inst;_analogremote\\._udp;local" "$LOGS/plain" \
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
    # And driven by our controller: a receiver that does not announce itself sits behind the
    # hand-made announcement; the controller honours its rate=40 (every 25 ms). The receiver is in
    # the announced session (`--session`, also without announcing): the controller's hello names
    # the session it found, and a receiver of another session refuses it (Protocol.md §7.4).
    host_spawn A "$LOGS/recv" "$BIN" receive --no-advertise --session "$session" --port 45002 --board sim --trace-board
    wait_for "$LOGS/recv" '^receiving on udp port 45002' 10 || { cat "$LOGS/recv" >&2; fail "receive --no-advertise did not start"; return 1; }
    controller B "$LOGS/ctl" 7 --session "$session"
    feed 7 "0 b"
    wait_map "$LOGS/recv" "$MAP_LED2" 10 || { cat "$LOGS/ctl" >&2; fail "the controller did not drive the hand-announced receiver"; return 1; }
    end_feed 7
    grep -q "sending to \"hand robot\" at $ADDR_A:45002 every 25 ms (the receiver's rate)" "$LOGS/ctl" \
        || { cat "$LOGS/ctl" >&2; fail "the controller did not honour rate=40"; return 1; }
    echo "    control on B: $(grep -o 'sending to.*' "$LOGS/ctl" | head -1)"
    # The same by name: "hand robot" has no session mark, so the direct resolve of
    # "hand robot [mark]" finds nothing and the fallback browse (2–6 s after start) does.
    controller B "$LOGS/ctl2" 8 --session "$session" --receiver "hand robot"
    local ctl2=$SPAWNED
    feed 8 "0 a"
    wait_map "$LOGS/recv" "$MAP_LED1" 15 || { cat "$LOGS/ctl2" >&2; fail "--receiver did not find the hand-announced receiver"; return 1; }
    end_feed 8
    reap "$ctl2"
    echo "    control --receiver \"hand robot\" on B: $(grep -o 'sending to.*' "$LOGS/ctl2" | head -1)"
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
    host_spawn A "$LOGS/blue-once" "$BIN" browse --quiet --session team-blue --once --timeout 3
    local blue_once=$SPAWNED
    host_spawn B "$LOGS/red-once" "$BIN" browse --quiet --session team-red --once --timeout 3
    wait "$SPAWNED" 2>/dev/null || true; wait "$blue_once" 2>/dev/null || true
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
    # control, not on a terminal: the same list and exit status, before reading any input.
    status=0
    host_run B "$BIN" control --session amb-test --input stdin < /dev/null > "$LOGS/c-out" 2> "$LOGS/c-err" || status=$?
    [ "$status" -eq 6 ] || { cat "$LOGS/c-out" "$LOGS/c-err" >&2; fail "control: exit status $status, expected 6"; return 1; }
    grep -q '^"amb-1" ' "$LOGS/c-out" && grep -q '^"amb-2" ' "$LOGS/c-out" || { cat "$LOGS/c-out" >&2; fail "control: the list lacks a receiver"; return 1; }
    grep -qx 'analog-remote: 2 receivers in session "amb-test" and none chosen: pick one with --receiver NAME' "$LOGS/c-err" \
        || { cat "$LOGS/c-err" >&2; fail "control: wrong message"; return 1; }
    # On a terminal (script(1) gives it one) control asks instead; the answer "2" picks amb-2.
    printf '0 0 b\n200 0 none\n' > "$LOGS/drive.script"
    status=0
    printf '2\n' | host_run B script -qec "$BIN control --session amb-test --input script:$LOGS/drive.script" /dev/null \
        > "$LOGS/tty" 2>&1 || status=$?
    # amb-1 and amb-2 are announcements only (`advertise`): nothing listens behind them, so the
    # controller says "no receiver" and, having never heard back, ends with status 4.
    [ "$status" -eq 4 ] || { cat "$LOGS/tty" >&2; fail "control on a terminal: exit status $status, expected 4 (nothing answered)"; return 1; }
    grep -q 'drive which one? \[1-2, or a name\]' "$LOGS/tty" && grep -q 'sending to "amb-2" at ' "$LOGS/tty" \
        || { cat -v "$LOGS/tty" >&2; fail "control on a terminal did not ask, or did not drive amb-2"; return 1; }
    grep -q "analog-remote: no receiver at $ADDR_A:45072" "$LOGS/tty" \
        || { cat -v "$LOGS/tty" >&2; fail "control on a terminal did not say that nothing listens at amb-2's port"; return 1; }
    host_run B "$BIN" browse --quiet --session amb-test --receiver amb-2 --once --timeout 2 > "$LOGS/named" 2>&1 \
        || { cat "$LOGS/named" >&2; fail "--receiver amb-2 failed"; return 1; }
    [ "$(wc -l < "$LOGS/named")" -eq 1 ] && grep -q '^"amb-2" ' "$LOGS/named" || { cat "$LOGS/named" >&2; fail "--receiver amb-2 did not pick amb-2"; return 1; }
    echo "    browse and control, no name: exit 6 with both listed; on a terminal control asked, sent to amb-2 and said no receiver listens there"
    echo "    browse --receiver amb-2: $(cat "$LOGS/named")"
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
    DISCOVERY_SUMMARY+="discovery: browse start → receiver available in ${times[*]} ms; new receiver visible after ${announce[*]} ms"$'\n'
    [ "$worst" -lt 3000 ] || { fail "discovery took $worst ms (more than 3 s)"; return 1; }
}

# Classroom (Protocol.md §7.6): a teacher's stop-all across the two hosts. One receiver per host
# (simulated board, teacher key), announced in a session; each is driven from the other host. A
# stop-all from A finds both by DNS-SD and stops them; they stay stopped while their controllers
# keep sending forward; a wrong key is refused; --release lets them go (after a resting state).
# Times: stop-all start → each board at motors 0 (incl. process start and the DNS-SD browse),
# and the same by --peer (no DNS-SD).
case_stop_all_two_hosts() {
    local session=stop-all-test key=teach3r-of-class-3b h port ports=() recv=() t0 t1 t2
    printf '0 0 none\n100 0 forward\n600000 0 forward\n' > "$LOGS/drive.script"
    # After the release the old controllers stop; the new ones rest until the old owner has lapsed
    # (failsafe 1 s), so they take over, and then drive.
    printf '0 0 none\n1500 0 forward\n600000 0 forward\n' > "$LOGS/again.script"
    for h in A B; do
        port=$((45090 + ${#ports[@]} + 1))
        host_spawn "$h" "$LOGS/recv-$h" "$BIN" receive --session "$session" --name "robot-$h" --port "$port" \
            --board sim --trace-board --teacher-key "$key" --failsafe-ms 1000
        recv+=("$LOGS/recv-$h")
        ports+=("$port")
        wait_for "$LOGS/recv-$h" '^notice: announced as ' 10 || { cat "$LOGS/recv-$h" >&2; fail "receiver on $h was not announced"; return 1; }
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
    host_run A "$BIN" stop-all --quiet --session "$session" --teacher-key a-wrong-teacher-key --timeout 3 > "$LOGS/wrong" 2>&1 || status=$?
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

# Issue 25: robots cloned from one image — the same --name on both hosts, one session. Each keeps
# its own robot id (its --state-dir), announced in TXT robot= and listed by `browse`; `stop-all
# --robot ID`, found by DNS-SD, stops that robot and leaves its clone driving.
case_robot_ids_two_hosts() {
    local session=clone-test key=teach3r-of-class-3b h port ports=() recv=() ids=()
    for h in A B; do
        port=$((45190 + ${#ports[@]} + 1))
        host_spawn "$h" "$LOGS/recv-$h" "$BIN" receive --session "$session" --name robot --port "$port" \
            --board sim --trace-board --teacher-key "$key" --state-dir "$LOGS/state-$h" --failsafe-ms 5000
        recv+=("$LOGS/recv-$h"); ports+=("$port")
        wait_for "$LOGS/recv-$h" '^notice: announced as ' 10 || { cat "$LOGS/recv-$h" >&2; fail "receiver on $h was not announced"; return 1; }
        ids+=("$(cat "$LOGS/state-$h/robot-id")")
    done
    [ "${ids[0]}" != "${ids[1]}" ] || { fail "both robots made the robot id ${ids[0]}"; return 1; }
    host_run B "$BIN" browse --quiet --session "$session" --once --timeout 3 > "$LOGS/browse" 2>&1 || { cat "$LOGS/browse" >&2; fail "browse failed"; return 1; }
    grep -q " robot=${ids[0]} " "$LOGS/browse" && grep -q " robot=${ids[1]} " "$LOGS/browse" \
        || { cat "$LOGS/browse" >&2; fail "browse did not list both robot ids (${ids[*]})"; return 1; }
    printf '0 0 none\n100 0 forward\n600000 0 forward\n' > "$LOGS/drive.script"
    host_spawn B "$LOGS/ctl-A" "$BIN" control --quiet --peer "$ADDR_A:${ports[0]}" --input "script:$LOGS/drive.script"
    host_spawn A "$LOGS/ctl-B" "$BIN" control --quiet --peer "$ADDR_B:${ports[1]}" --input "script:$LOGS/drive.script"
    local forward='^map .{68}c040$'
    for h in 0 1; do wait_map "${recv[$h]}" "$forward" 10 || { tail -n 5 "${recv[$h]}" >&2; fail "robot $h never drove"; return 1; }; done
    host_run A "$BIN" stop-all --quiet --session "$session" --teacher-key "$key" --robot "${ids[1]}" --timeout 3 > "$LOGS/stop" 2>&1 \
        || { cat "$LOGS/stop" >&2; fail "stop-all --robot ${ids[1]} failed"; return 1; }
    grep -q '^reached 1 of 1 receiver$' "$LOGS/stop" || { cat "$LOGS/stop" >&2; fail "stop-all --robot did not reach exactly one"; return 1; }
    wait_for "${recv[1]}" 'STOPPED BY TEACHER' 5 || { tail -n 5 "${recv[1]}" >&2; fail "robot B (${ids[1]}) did not stop"; return 1; }
    # Its clone got no command at all (stop-all left it alone after its query): still driving.
    ! grep -q 'STOPPED BY TEACHER' "${recv[0]}" && wait_map "${recv[0]}" "$forward" 5 \
        || { grep -nE "STOPPED BY TEACHER|^map" "${recv[0]}" | tail -n 4 >&2; fail "its clone on A (${ids[0]}) stopped too"; return 1; }
    echo "    robot ids ${ids[0]} (A) and ${ids[1]} (B), both named \"robot\": browse lists both, stop-all --robot stopped B alone"
}
CASES+=(robot_ids_two_hosts)

# ---------------------------------------------------------------------------------------------

netns_setup
# A controller that exited early must fail its case, not kill the script when fed.
trap '' PIPE
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
    exec 7>&- 8>&-
done
[ -n "$DISCOVERY_SUMMARY" ] && printf '%s' "$DISCOVERY_SUMMARY"
[ -n "${STOP_ALL_SUMMARY:-}" ] && echo "$STOP_ALL_SUMMARY"
[ "$failed" -eq 0 ] || echo "two-host-test: failed: ${failures[*]}"
echo "two-host: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
