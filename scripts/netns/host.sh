#!/bin/sh
# host.sh STATE_DIR — turn the current (fresh) network + mount namespace into a small "host":
# a private /run, its own D-Bus system bus and its own avahi-daemon, then hold the namespaces
# open (exec sleep) so other commands can join them with nsenter. Started by lib.sh as
#   ip netns exec NS unshare -m --propagation private sh host.sh STATE_DIR
# which execs all the way down: the pid lib.sh records is this shell, then the sleep.
#
# Contract: writes dbus.pid and avahi.pid into STATE_DIR (lib.sh kills exactly those pids),
# and "ready" once both daemons answer. Never run it outside a namespace you created: it starts
# an mDNS responder, which must not announce on the machine's real interface.
set -eu
state=$1

[ -f "$state/avahi-daemon.conf" ] || { echo "host.sh: $state/avahi-daemon.conf missing" >&2; exit 1; }
# Refuse to run in the machine's own network namespace (the one pid 1 lives in).
if [ "$(readlink /proc/self/ns/net)" = "$(readlink /proc/1/ns/net)" ]; then
    echo "host.sh: refusing to start avahi-daemon in the machine's own network namespace" >&2
    exit 1
fi

mkdir -p "$state/run"
mount --bind "$state/run" /run            # private /run: only this mount namespace sees it
mkdir -p /run/dbus /run/avahi-daemon
unset DBUS_SYSTEM_BUS_ADDRESS             # the default path now lands in the private /run

dbus-daemon --system --fork --nopidfile --print-pid=3 3>"$state/dbus.pid"
avahi-daemon -f "$state/avahi-daemon.conf" -D --no-chroot --no-drop-root --no-rlimits
cp /run/avahi-daemon/pid "$state/avahi.pid"

# avahi-daemon -c exits 0 once the daemon runs; -D already waited for its start-up.
n=0
until avahi-daemon -c 2>/dev/null; do
    n=$((n + 1)); [ $n -lt 50 ] || { echo "host.sh: avahi-daemon did not come up" >&2; exit 1; }
    sleep 0.1
done
: > "$state/ready"
exec sleep 2147483647
