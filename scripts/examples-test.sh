#!/usr/bin/env bash
# CI: the three AnalogRemoteKit examples (Examples/*) built as a user's packages would be — each
# depends on this package by path — and run against each other and a real receiver, on loopback
# (address-based: no mDNS responder needed); then, as root, once more between two network
# namespaces with an avahi-daemon each (scripts/netns/lib.sh), where the peer logger finds a
# receiver and another program's session by DNS-SD and connects to them by peer id. Without
# root or namespaces that last part prints one SKIPPED line and the rest still counts.
#
#   scripts/examples-test.sh        (after `swift build`; run by ./run.sh test; ~1 min warm)
#
# The three are built into ONE scratch path (.build/examples), so the library and its
# dependencies are compiled once and the second and third builds only add their own main.swift.
# Checks: every Swift snippet of the docs compiles in a package made as the docs say
# (scripts/doc-snippets.py); the peer logger lists a receiver the test started; the two-player game plays a round
# between two processes (both print the same verdict); the custom robot's simulated drive moves
# when `analog-remote control` drives it, and rests when the controller stops; the logger says
# once whether it finds peers by DNS-SD (here, with no responder in the machine's namespace, it
# does not) and connects by address either way.
# Last line: `examples: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bin=${ANALOG_REMOTE:-$root/.build/debug/analog-remote}
scratch=$root/.build/examples
work=$(mktemp -d)
passed=0 failed=0
pids=()

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

check() {   # check NAME CONDITION-EXIT-STATUS DETAIL-FILE
  if [[ $2 == 0 ]]; then
    passed=$((passed + 1)); echo "ok    $1"
  else
    failed=$((failed + 1)); echo "FAIL  $1"; [[ -n ${3:-} && -f $3 ]] && sed 's/^/      /' "$3" | tail -20
  fi
}

# Waits up to $3 seconds for a line matching $2 in file $1.
wait_for() {
  local file=$1 pattern=$2 limit=$(( ${3:-20} * 10 ))
  for _ in $(seq "$limit"); do grep -qE "$pattern" "$file" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

# ---- build: one scratch path for the three ----------------------------------------------------
start=$(date +%s)
exe=$scratch/debug
# --product: with a scratch path shared between roots, a plain `swift build` of the next root
# may reuse the previous root's plan and link nothing; naming the product always builds it.
for example in PeerLogger:peer-logger TwoPlayerGame:two-player-game CustomRobot:custom-robot; do
  package=${example%%:*} product=${example#*:}
  rm -f "$exe/$product"
  if ! swift build --package-path "Examples/$package" --scratch-path "$scratch" --product "$product" >"$work/build-$package.log" 2>&1 \
     || [[ ! -x $exe/$product ]]; then
    check "build $package" 1 "$work/build-$package.log"
    echo "examples: $passed passed, $failed failed"
    exit 1
  fi
  check "build $package ($(( $(date +%s) - start )) s so far)" 0
done

# ---- every Swift snippet of the docs, compiled as a user's package --------------------------------
# scripts/doc-snippets.py makes the package from docs/swift-api.md's Package.swift block (the
# package name rule, swift-log) and one file per snippet of README, swift-api.md, DocC and doc
# comments; it also refuses `.package(path:` without `name:` and a receive line without
# --no-advertise. Built into the same scratch path: only the snippets are compiled anew.
if python3 scripts/doc-snippets.py "$work/DocSnippets" >"$work/snippets.log" 2>&1 \
   && swift build --package-path "$work/DocSnippets" --scratch-path "$scratch" --product MyRobotApp >>"$work/snippets.log" 2>&1 \
   && "$exe/MyRobotApp" >>"$work/snippets.log" 2>&1; then
  check "the docs' Swift snippets compile as a user's package ($(grep -o '[0-9]* snippets' "$work/snippets.log"))" 0
else
  check "the docs' Swift snippets compile as a user's package" 1 "$work/snippets.log"
fi

# ---- the logger lists a receiver ----------------------------------------------------------------
"$bin" receive --quiet --no-advertise --port 0 --board sim --name example-robot >"$work/receiver.out" 2>"$work/receiver.err" &
pids+=($!); receiver=$!
wait_for "$work/receiver.out" '^receiving on udp port [0-9]+' 20
port=$(sed -n 's/^receiving on udp port \([0-9]*\)$/\1/p' "$work/receiver.out" | head -1)
timeout 20 "$exe/peer-logger" --session AnalogRemote --name ci-logger --connect "127.0.0.1:$port" --seconds 2 >"$work/logger.out" 2>&1
grep -q '^connected example-robot (' "$work/logger.out" \
  && [[ $(grep -cE '^(not )?finding peers by DNS-SD' "$work/logger.out") == 1 ]]
check "peer-logger lists the receiver example-robot (by address; whether DNS-SD works, said once)" $? "$work/logger.out"

# ---- the game plays a round between two processes -----------------------------------------------
timeout 30 "$exe/two-player-game" --host --name Ada --move rock >"$work/host.out" 2>&1 &
pids+=($!); host=$!
wait_for "$work/host.out" '^hosting on udp port [0-9]+' 20
game_port=$(sed -n 's/^hosting on udp port \([0-9]*\)$/\1/p' "$work/host.out" | head -1)
timeout 20 "$exe/two-player-game" --join "127.0.0.1:$game_port" --name Bob --move scissors >"$work/guest.out" 2>&1
guest_status=$?
wait "$host" 2>/dev/null; host_status=$?
[[ $guest_status == 0 && $host_status == 0 ]] && grep -q "^round 1: Ada rock, Bob scissors: Ada wins$" "$work/host.out" \
  && grep -q "^round 1: Bob scissors, Ada rock: Ada wins$" "$work/guest.out"
game=$?
{ sed 's/^/host:  /' "$work/host.out"; sed 's/^/guest: /' "$work/guest.out"; } >"$work/game.out"
check "two-player-game: a round between two processes, both see Ada win" $game "$work/game.out"

# ---- the custom robot is driven by `analog-remote control` --------------------------------------
timeout 30 "$exe/custom-robot" --name ci-robot --port 0 --no-advertise --seconds 8 >"$work/robot.out" 2>&1 &
pids+=($!); robot=$!
wait_for "$work/robot.out" 'receiving on udp port [0-9]+' 20
robot_port=$(sed -n 's/.*receiving on udp port \([0-9]*\)$/\1/p' "$work/robot.out" | head -1)
{ echo "0 forward"; sleep 1.5; } | "$bin" control --peer "127.0.0.1:$robot_port" --input stdin --name ci-driver >"$work/control.out" 2>&1
wait_for "$work/robot.out" '^command: safe state' 5
grep -q '^command: left 64 right 64' "$work/robot.out" && grep -qE '^x \+0\.[1-9]' "$work/robot.out" \
  && [[ $(grep '^command:' "$work/robot.out" | tail -1) == "command: safe state" || $(grep '^command:' "$work/robot.out" | tail -1) == "command: left 0 right 0 lights [0, 0]" ]]
check "custom-robot: driven forward by control, then at rest" $? "$work/robot.out"
wait "$robot" 2>/dev/null

# ---- by DNS-SD, between two hosts (network namespaces, an avahi-daemon each) -------------------
# Host A runs a receiver and a peer logger (a program's session); the logger on host B finds both
# by DNS-SD alone and connects to each by its peer id. Never touches the machine's own namespace.
# Sourced here, not inside the function: its `declare`d arrays (the pids and namespaces it
# cleans up) would be local to the function and gone by the time the EXIT trap runs.
# shellcheck source=netns/lib.sh
source "$root/scripts/netns/lib.sh"
netns_part() {
  local why
  why=$( (netns_require) 2>&1 | grep '^SKIPPED' )
  if [[ -n $why ]]; then echo "$why (examples by DNS-SD)"; return 0; fi
  NETNS_EXTRA_CLEANUP=cleanup
  netns_setup
  local session="examples-$RUN_ID"
  host_spawn A "$work/dns-receiver.out" "$bin" receive --session "$session" --name dns-robot --port 0 --board sim
  wait_for "$work/dns-receiver.out" '^notice: announced as ' 20
  host_spawn A "$work/dns-ada.out" timeout 30 "$exe/peer-logger" --session "$session" --name Ada --seconds 25
  wait_for "$work/dns-ada.out" '^finding peers by DNS-SD' 20
  host_spawn B "$work/dns-bob.out" timeout 30 "$exe/peer-logger" --session "$session" --name Bob --connect-found --seconds 25
  local bob=$SPAWNED
  wait_for "$work/dns-bob.out" '^connected dns-robot \(' 20 && wait_for "$work/dns-bob.out" '^connected Ada \(' 20 \
    && grep -q '^available dns-robot (' "$work/dns-bob.out" && grep -q '^available Ada (' "$work/dns-bob.out" \
    && grep -q '^finding peers by DNS-SD' "$work/dns-bob.out" && wait_for "$work/dns-ada.out" '^connected Bob \(' 5
  check "peer-logger finds a receiver and another session by DNS-SD on another host, connects by peer id" $? "$work/dns-bob.out"
  # The receiver found is the receiver connected: TXT peer= is the id its accept carries.
  local found connected
  found=$(sed -n 's/^available dns-robot (\(.*\))$/\1/p' "$work/dns-bob.out" | head -1)
  connected=$(sed -n 's/^connected dns-robot (\(.*\))$/\1/p' "$work/dns-bob.out" | head -1)
  [[ -n $found && $found == "$connected" ]]
  check "the receiver's announced peer id ($found) is the one it connects under (${connected:-none})" $? "$work/dns-bob.out"
  # Bob leaves the network: Ada, who found him, sees him unavailable (his announcement withdrawn).
  wait_for "$work/dns-ada.out" '^available Bob \(' 20
  host_stop "$bob"
  wait_for "$work/dns-ada.out" '^unavailable Bob \(' 15
  check "a session that leaves is unavailable to the others" $? "$work/dns-ada.out"
}
netns_part

echo "examples: $passed passed, $failed failed"
[[ $failed == 0 ]]
