#!/usr/bin/env bash
# CI: `analog-remote doctor`, each check, in network namespaces this script makes (never in the
# machine's own: avahi-daemon and D-Bus run only inside them, with a private /run).
#
#   scripts/doctor-test.sh          (as root; run by ./run.sh test)
#
# One namespace with a veth pair (multicast on, an address) and one with loopback only. In the
# first: no daemons → dbus/avahi fail; dbus + avahi-daemon started → ok; the receiver's port
# held by a receiver → warn; multicast off on one interface → warn; an nft rule dropping
# 5353/udp → fail; a bad config file → fail; a serial board (board-sim on a pty, linked as
# ttyACM0 with a programland name) answering → ok with its stable name, stopped → fail, none →
# warn; as an unprivileged user without dialout/audio → fail, with them → ok; everything well →
# exit 0; and `receive` under a fake $NOTIFY_SOCKET sends READY=1 only with its name announced.
# In the second: no interface but loopback → fail.
# Last line: `doctor: N passed, M failed` (or `SKIPPED: why`).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${ANALOG_REMOTE:-$PWD/.build/debug/analog-remote}

if [[ ${1:-} == --inner ]]; then
  # ---- inside the namespace and a private mount namespace ---------------------------------
  shift
  work=$1
  passed=0 failed=0
  run_dir=$(mktemp -d -p "$work" run.XXXX)
  mount --bind "$run_dir" /run
  mkdir -p /run/dbus /run/avahi-daemon
  dbus_pid="" avahi_pid="" sim_pid="" recv_pid=""
  stop() { [[ -n $1 ]] && kill "$1" 2>/dev/null && for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done; }
  cleanup() {
    stop "$recv_pid"; [[ -n $sim_pid ]] && kill -CONT "$sim_pid" 2>/dev/null; stop "$sim_pid"
    stop "$avahi_pid"; stop "$dbus_pid"
    nft delete table inet ar_doctor_test 2>/dev/null
    umount -l /run 2>/dev/null
  }
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  export AVAHI_COMPAT_NOWARN=1
  dev=$work/dev
  mkdir -p "$dev"
  port=27183   # the fixed default: free here, in a namespace of our own

  doctor() { "$bin" doctor --dev-directory "$dev" "$@" 2>&1; }
  # expect DESCRIPTION VERDICT CHECK PATTERN -- the doctor output in $out
  expect() {
    if grep -qE "^$2 +$3: .*$4" <<<"$out"; then passed=$((passed + 1)); echo "ok    $1"
    else failed=$((failed + 1)); echo "FAIL  $1: no '$2 $3: …$4' in:" >&2; sed 's/^/      /' <<<"$out" >&2; fi
  }
  expect_status() {
    if [[ $status -eq $2 ]]; then passed=$((passed + 1)); echo "ok    $1"
    else failed=$((failed + 1)); echo "FAIL  $1: exit $status, expected $2" >&2; sed 's/^/      /' <<<"$out" >&2; fi
  }

  out=$(doctor); status=$?
  expect "no system bus → dbus fails" fail dbus "no system bus"
  expect "no avahi-daemon → avahi fails" fail avahi "no mDNS responder"
  expect "the veth has multicast → ok" ok multicast "multicast is on for .*ar-dva"
  expect "the free port → ok" ok port "udp port $port is free"
  expect "no board → warn" warn boards "no serial board"
  expect "root → groups ok" ok groups "root may open every device"
  expect "no firewall rule → ok" ok firewall "no rule drops"
  expect "NTP is not needed" ok clock "not needed"
  expect_status "a failing check → exit 1" 1

  dbus-daemon --system --fork --nopidfile --print-pid=3 3>"$work/dbus.pid"
  dbus_pid=$(cat "$work/dbus.pid")
  avahi-daemon -D --no-chroot --no-drop-root 2>/dev/null
  for _ in $(seq 100); do [[ -s /run/avahi-daemon/pid ]] && break; sleep 0.1; done
  avahi_pid=$(cat /run/avahi-daemon/pid 2>/dev/null)
  for _ in $(seq 50); do doctor | grep -q "^ok    avahi" && break; sleep 0.1; done

  # With avahi here: the receiver's READY=1 (systemd's Type=notify) names the announcement, i.e.
  # it is sent only once the name is registered, not just once the port is bound.
  if command -v python3 >/dev/null; then
    python3 - "$work/notify.sock" >"$work/notify.out" 2>&1 <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(20)
while True:
    d = s.recv(4096).decode()
    print(d.replace("\n", " "), flush=True)
    if d.startswith("READY=1"):
        break
PY
    listener_pid=$!
    for _ in $(seq 100); do [[ -S $work/notify.sock ]] && break; sleep 0.05; done
    NOTIFY_SOCKET=$work/notify.sock "$bin" receive --quiet --board sim --name "doctor test robot" >"$work/recv-ad.out" 2>&1 &
    recv_pid=$!
    for _ in $(seq 200); do kill -0 "$listener_pid" 2>/dev/null || break; sleep 0.1; done
    kill "$listener_pid" 2>/dev/null
    if grep -qE '^READY=1 STATUS=receiving on udp port [0-9]+, announced as "doctor test robot"' "$work/notify.out"; then
      passed=$((passed + 1)); echo "ok    receive under Type=notify: READY=1 once the name is announced"
    else
      failed=$((failed + 1)); echo "FAIL  receive under Type=notify: READY=1 once the name is announced:" >&2
      cat "$work/notify.out" "$work/recv-ad.out" >&2
    fi
    stop "$recv_pid"; recv_pid=""
  fi

  "$bin" board-sim --quiet --link "$dev/ttyACM0" >"$work/sim.out" 2>&1 &
  sim_pid=$!
  for _ in $(seq 200); do [[ -L $dev/ttyACM0 ]] && break; sleep 0.05; done
  ln -s ttyACM0 "$dev/programland"
  out=$(doctor); status=$?
  expect "the system bus runs → dbus ok" ok dbus "the system bus answers"
  expect "avahi-daemon runs → avahi ok" ok avahi "avahi-daemon \\(pid $avahi_pid\\) answers"
  expect "a board answers, with its stable name and profile" ok boards "$dev/ttyACM0 = $dev/programland .*answers: profile stock · firmware product 1"
  expect_status "all well → exit 0" 0

  out=$(doctor --no-probe); expect "--no-probe lists the board without opening it" ok boards "not probed"
  kill -STOP "$sim_pid"
  out=$(doctor); status=$?
  expect "a board that does not answer → fail" fail boards "does not answer"
  kill -CONT "$sim_pid"

  "$bin" receive --quiet --no-advertise --board sim --port "$port" >"$work/recv.out" 2>&1 &
  recv_pid=$!
  for _ in $(seq 200); do grep -q "receiving on udp port" "$work/recv.out" && break; sleep 0.05; done
  out=$(doctor); expect "the port held by a receiver → warn" warn port "udp port $port is in use"
  stop "$recv_pid"; recv_pid=""

  ip link set ar-dvb multicast off
  out=$(doctor); expect "multicast off on one interface → warn" warn multicast "multicast is off on ar-dvb"
  ip link set ar-dvb multicast on

  if command -v nft >/dev/null; then
    nft add table inet ar_doctor_test
    nft add chain inet ar_doctor_test input '{ type filter hook input priority 0; policy accept; }'
    nft add rule inet ar_doctor_test input udp dport 5353 drop
    out=$(doctor); expect "an nft rule dropping mDNS → fail" fail firewall "may drop mDNS \\(5353/udp\\)"
    nft delete table inet ar_doctor_test
    out=$(doctor); expect "the rule removed → ok" ok firewall "no rule drops"
  else
    echo "SKIPPED: firewall case (no nft)"
  fi

  printf 'prot = 1\n' > "$work/bad.toml"
  out=$(doctor --config "$work/bad.toml"); expect "a bad config file → fail naming file and key" fail config "config $work/bad.toml: key \"prot\""
  printf 'board = "sim"\n' > "$work/good.toml"
  out=$(doctor --config "$work/good.toml"); expect "a good config file → ok" ok config "good.toml is valid"

  nobody=$(id -u nobody) nogroup=$(getent group nogroup | cut -d: -f3)
  out=$(setpriv --reuid="$nobody" --regid="$nogroup" --clear-groups "$bin" doctor --dev-directory "$dev" --no-probe 2>&1)
  expect "a user outside dialout and audio → groups fail" fail groups "nobody is not in dialout, audio"
  groups=$(getent group dialout | cut -d: -f3),$(getent group audio | cut -d: -f3)
  out=$(setpriv --reuid="$nobody" --regid="$nogroup" --groups="$groups" "$bin" doctor --dev-directory "$dev" --no-probe 2>&1)
  expect "a user in dialout and audio → groups ok" ok groups "nobody is in dialout, audio"

  echo "RESULT $passed $failed"
  exit 0
fi

# ---- outside: namespaces, then the inner part in each ---------------------------------------
if [[ $(id -u) -ne 0 ]]; then echo "SKIPPED: doctor test needs root (network namespaces)"; exit 0; fi
for tool in ip unshare dbus-daemon avahi-daemon setpriv; do
  command -v "$tool" >/dev/null || { echo "SKIPPED: doctor test needs $tool (scripts/setup.sh installs it)"; exit 0; }
done
[[ -x $bin ]] || { echo "doctor-test: no $bin: build first (swift build)" >&2; echo "doctor: 0 passed, 1 failed"; exit 1; }

ns=ar-doc-$$ lo_ns=ar-dlo-$$
work=$(mktemp -d -t ar-doctor-$$.XXXXXX)
chmod 0755 "$work"
cleanup() {
  ip netns del "$ns" 2>/dev/null
  ip netns del "$lo_ns" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$ns" && ip netns add "$lo_ns" || { echo "SKIPPED: cannot make network namespaces"; exit 0; }
ip -n "$ns" link add ar-dva type veth peer name ar-dvb
ip -n "$ns" addr add 198.18.7.1/24 dev ar-dva
ip -n "$ns" addr add 198.18.7.2/24 dev ar-dvb
for l in lo ar-dva ar-dvb; do ip -n "$ns" link set "$l" up; done
ip -n "$lo_ns" link set lo up

passed=0 failed=0
# The inner run's lines go out through our own stderr descriptor, after it ends. Not `tee
# /dev/stderr`: when stderr is a file (`./run.sh test > log 2>&1`), tee reopens it with O_TRUNC and
# wipes everything written before (and `tee -a` writes at another offset than ours).
inner=$(timeout 120 ip netns exec "$ns" unshare -m --propagation private bash "$0" --inner "$work")
printf '%s\n' "$inner" >&2
result=$(awk '$1 == "RESULT" { print $2, $3 }' <<<"$inner")
if [[ -n $result ]]; then read -r p f <<<"$result"; passed=$((passed + p)); failed=$((failed + f))
else failed=$((failed + 1)); echo "FAIL  the doctor run in $ns did not finish" >&2; fi

out=$(ip netns exec "$lo_ns" "$bin" doctor --dev-directory "$work" --no-probe 2>&1)
if grep -qE "^fail +multicast: no network interface is up besides loopback" <<<"$out"; then passed=$((passed + 1)); echo "ok    only loopback → multicast fails"
else failed=$((failed + 1)); echo "FAIL  only loopback → multicast fails:" >&2; echo "$out" >&2; fi

echo "doctor: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
