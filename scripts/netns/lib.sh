# lib.sh — build "hosts" out of network namespaces for DNS-SD tests (sourced, bash).
#
#   netns_require                       print one loud SKIPPED line and exit 0 if we cannot run
#   netns_setup                         two hosts A and B joined by a veth pair, each with its
#                                       own private /run, D-Bus system bus and avahi-daemon
#   host_run A|B CMD...                 run CMD inside host A or B (foreground)
#   host_spawn A|B OUTFILE CMD...       start CMD inside a host in the background; its pid is
#                                       in $SPAWNED and it is stopped by netns_cleanup; its
#                                       stdin is $SPAWN_STDIN (a FIFO to feed it), else /dev/null
#   host_stop PID                       stop one spawned process (SIGTERM, then SIGKILL)
#   host_stop_all                       stop every spawned process
#   host_restart_avahi A|B [KILL]       stop (or, with KILL, crash) a host's avahi-daemon and
#                                       start it again (the "responder died mid-session" path)
#   netns_cleanup                       stop everything we started, by pid; delete namespaces
#
# Every name carries a per-run prefix (ar$$…) so two runs never collide. Nothing here starts a
# daemon in the machine's own network namespace: host.sh refuses to, and only ever runs under
# `ip netns exec` of a namespace made here. The EXIT/INT/TERM traps are installed by
# netns_setup; the caller may add its own work to netns_cleanup via NETNS_EXTRA_CLEANUP.

NETNS_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN_ID=${RUN_ID:-ar$$}
NS_A="$RUN_ID-a"; NS_B="$RUN_ID-b"
VETH_A="${RUN_ID}va"; VETH_B="${RUN_ID}vb"     # interface names: at most 15 characters
ADDR_A=198.18.0.1; ADDR_B=198.18.0.2            # RFC 2544 benchmarking range: never routed
STATE_ROOT=""
declare -a NETNS_PIDS=()                         # spawned test processes, in start order
declare -a NETNS_MADE=()                         # namespaces we created
SPAWNED=""
HOLDER_COMMS="sleep|sh|unshare|ip"              # what a host's holder pid runs, stage by stage

netns_skip() { echo "SKIPPED: two-host DNS-SD test: $*"; exit 0; }

netns_require() {
    [ "$(id -u)" -eq 0 ] || netns_skip "needs root (ip netns, mount --bind); run it as root or in CI"
    command -v ip >/dev/null || netns_skip "no 'ip' command (install iproute2)"
    ip netns list >/dev/null 2>&1 || netns_skip "'ip netns' does not work here"
    local tool
    for tool in unshare nsenter avahi-daemon dbus-daemon avahi-browse avahi-publish; do
        command -v "$tool" >/dev/null || netns_skip "no '$tool' (run scripts/setup.sh)"
    done
    # Probe: can we create a namespace at all (containers often forbid it)?
    if ! ip netns add "$RUN_ID-probe" 2>/dev/null; then
        netns_skip "cannot create a network namespace (no CAP_SYS_ADMIN in this container?)"
    fi
    ip netns del "$RUN_ID-probe"
}

# The pid still runs the program we started (guards against pid reuse before a kill).
pid_is() { # PID COMM[|COMM…] — /proc/PID/comm starts with one of them
    local comm alt
    [ -n "$1" ] && [ -r "/proc/$1/comm" ] || return 1
    comm=$(cat "/proc/$1/comm" 2>/dev/null) || return 1
    local IFS='|'
    for alt in $2; do case "$comm" in "$alt"*) return 0;; esac; done
    return 1
}

stop_pid() { # PID COMM-PREFIX
    local pid=$1 comm=$2 i
    pid_is "$pid" "$comm" || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for i in $(seq 1 20); do pid_is "$pid" "$comm" || return 0; sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null || true
}

host_state() { case "$1" in A) echo "$STATE_ROOT/a";; B) echo "$STATE_ROOT/b";; *) echo "bad host $1" >&2; return 1;; esac; }

write_avahi_conf() { # FILE HOSTNAME IFACE
    cat > "$1" <<CONF
[server]
host-name=$2
use-ipv4=yes
use-ipv6=yes
allow-interfaces=$3
enable-dbus=yes
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
[reflector]
[rlimits]
CONF
}

start_host() { # A|B NS IFACE
    local state; state=$(host_state "$1")
    mkdir -p "$state/run"
    write_avahi_conf "$state/avahi-daemon.conf" "$RUN_ID-$(echo "$1" | tr AB ab)" "$3"
    ip netns exec "$2" unshare -m --propagation private sh "$NETNS_LIB_DIR/host.sh" "$state" \
        >"$state/host.log" 2>&1 &
    echo $! > "$state/holder.pid"
}

wait_host_ready() { # A|B
    local state i; state=$(host_state "$1")
    for i in $(seq 1 100); do
        [ -e "$state/ready" ] && return 0
        pid_is "$(cat "$state/holder.pid")" "$HOLDER_COMMS" || break
        sleep 0.1
    done
    echo "host $1 did not come up:" >&2; cat "$state/host.log" >&2; return 1
}

netns_setup() {
    trap netns_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    STATE_ROOT=$(mktemp -d -t "$RUN_ID.XXXXXX")
    ip netns add "$NS_A" && NETNS_MADE+=("$NS_A")
    ip netns add "$NS_B" && NETNS_MADE+=("$NS_B")
    ip link add "$VETH_A" type veth peer name "$VETH_B"
    ip link set "$VETH_A" netns "$NS_A"
    ip link set "$VETH_B" netns "$NS_B"
    ip -n "$NS_A" addr add "$ADDR_A/24" brd + dev "$VETH_A"
    ip -n "$NS_B" addr add "$ADDR_B/24" brd + dev "$VETH_B"
    local ns
    for ns in "$NS_A" "$NS_B"; do
        ip -n "$ns" link set lo up
    done
    ip -n "$NS_A" link set "$VETH_A" up
    ip -n "$NS_B" link set "$VETH_B" up
    start_host A "$NS_A" "$VETH_A"
    start_host B "$NS_B" "$VETH_B"
    wait_host_ready A
    wait_host_ready B
}

host_holder() { cat "$(host_state "$1")/holder.pid"; }

host_run() { # A|B CMD...
    local h=$1; shift
    env -u DBUS_SYSTEM_BUS_ADDRESS -u AVAHI_COMPAT_NOWARN nsenter -t "$(host_holder "$h")" -m -n -- "$@"
}

host_spawn() { # A|B OUTFILE CMD...   (stdin: $SPAWN_STDIN, default /dev/null)
    local h=$1 out=$2; shift 2
    # The script's own feed descriptors (7, 8: FIFOs that controllers read) stay out of the
    # child, or a process started later would hold a FIFO open and its reader never see EOF.
    env -u DBUS_SYSTEM_BUS_ADDRESS -u AVAHI_COMPAT_NOWARN nsenter -t "$(host_holder "$h")" -m -n -- "$@" \
        <"${SPAWN_STDIN:-/dev/null}" >"$out" 2>&1 7>&- 8>&- &
    SPAWNED=$!
    # comm is env, then nsenter, then the command itself (each execs the next).
    NETNS_PIDS+=("$SPAWNED:$(basename "$1" | cut -c1-15)|env|nsenter")
}

host_stop() { # PID
    local entry
    for entry in "${NETNS_PIDS[@]}"; do
        [ "${entry%%:*}" = "$1" ] && stop_pid "$1" "${entry#*:}"
    done
    wait "$1" 2>/dev/null || true
}

host_stop_all() {
    local entry
    for entry in "${NETNS_PIDS[@]}"; do stop_pid "${entry%%:*}" "${entry#*:}"; wait "${entry%%:*}" 2>/dev/null || true; done
    NETNS_PIDS=()
}

host_restart_avahi() { # A|B [KILL] — KILL: a crash (no goodbye packets), else a clean stop
    local state pid i; state=$(host_state "$1")
    pid=$(cat "$state/avahi.pid")
    if [ "${2:-}" = KILL ]; then
        pid_is "$pid" avahi-daemon && kill -KILL "$pid"
        for i in $(seq 1 50); do pid_is "$pid" avahi-daemon || break; sleep 0.05; done
        rm -f "$state/run/avahi-daemon/pid"      # left behind by the crash
    else
        stop_pid "$pid" avahi-daemon
    fi
    for i in $(seq 1 50); do pid_is "$pid" avahi-daemon || break; sleep 0.05; done
    host_run "$1" avahi-daemon -f "$state/avahi-daemon.conf" -D --no-chroot --no-drop-root --no-rlimits
    cp "$state/run/avahi-daemon/pid" "$state/avahi.pid"
}

netns_cleanup() {
    local status=$? entry h state ns
    trap - EXIT INT TERM
    [ -n "${NETNS_EXTRA_CLEANUP:-}" ] && $NETNS_EXTRA_CLEANUP
    for entry in "${NETNS_PIDS[@]}"; do stop_pid "${entry%%:*}" "${entry#*:}"; done
    if [ -n "$STATE_ROOT" ]; then
        for h in A B; do
            state=$(host_state "$h")
            [ -f "$state/avahi.pid" ] && stop_pid "$(cat "$state/avahi.pid")" avahi-daemon
            [ -f "$state/dbus.pid" ] && stop_pid "$(cat "$state/dbus.pid")" dbus-daemon
            [ -f "$state/holder.pid" ] && stop_pid "$(cat "$state/holder.pid")" "$HOLDER_COMMS"
        done
    fi
    for ns in "${NETNS_MADE[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
    # A veth end still in the machine's namespace (set-up failed before moving it) goes too.
    ip link show "$VETH_A" >/dev/null 2>&1 && ip link del "$VETH_A" 2>/dev/null
    ip link show "$VETH_B" >/dev/null 2>&1 && ip link del "$VETH_B" 2>/dev/null
    [ -n "$STATE_ROOT" ] && rm -rf "$STATE_ROOT"
    exit "$status"
}
