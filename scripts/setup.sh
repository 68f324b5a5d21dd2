#!/usr/bin/env bash
# Idempotent machine set-up: installs the Debian packages AnalogRemote needs, only those missing.
# Safe to run again and again; prints nothing when everything is already there (unless --verbose).
#
# Trap: installing avahi-daemon or dbus from a Debian package normally *starts* the daemon. On this
# kind of machine that would announce mDNS on the real network interface, so every install runs
# behind a policy-rc.d that forbids starting services (exit code 101, Debian's documented "action
# forbidden"). Our tests start avahi only inside network namespaces they build themselves.
set -euo pipefail

# What the build links against: all `./run.sh demo` needs (the demo runs on loopback with
# --no-advertise, so no mDNS daemon).
BUILD_PACKAGES=(
  libavahi-compat-libdnssd-dev   # dns_sd.h + libdns_sd (Avahi's Bonjour compatibility layer)
  libasound2-dev                 # ALSA rawmidi, for midi:hw:… boards
  libsdl2-dev                    # SDL2 GameController, for --input gamepad
  libqrencode-dev                # QR code of the phone page URL in the terminal (analog-remote web)
  libsodium-dev                  # ChaCha20-Poly1305 (CSodium): the control plane's AEAD
  pkg-config                     # SwiftPM finds the C libraries through it
)
# What the test suite needs beyond the build.
TEST_PACKAGES=(
  avahi-daemon avahi-utils       # mDNS responder + avahi-browse/avahi-publish (two-host test)
  dbus                           # avahi talks to its clients over the system bus
  iproute2                       # ip netns, for the two-host discovery test
  chromium                       # headless browser for the phone page test (scripts/web-browser-test.sh)
  tcpdump                        # counts mDNS packets in the classroom test
  debootstrap                    # package-test.sh: a clean Debian root to install the .deb into
  binutils                       # build-deb.sh: objdump lists the libraries the binary needs
  systemd                        # systemd-analyze verify on the service unit (package-test.sh)
  systemd-container              # systemd-nspawn: the service under a real systemd (systemd-test.sh)
  nftables                       # doctor-test.sh: a firewall rule inside a test namespace
  librsvg2-bin                   # rsvg-convert: `analog-remote plot -o x.png` (SVG → PNG)
  time                           # /usr/bin/time: the CPU time of a crafted recording's read (HostileRecordingEndToEndTests)
)

# Usage: setup.sh [--demo] [--verbose]   (--demo: only what the build needs)
verbose=""
PACKAGES=("${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}")
for arg in "$@"; do
  case "$arg" in
    --demo) PACKAGES=("${BUILD_PACKAGES[@]}") ;;
    --verbose) verbose=1 ;;
    *) echo "setup: unknown option '$arg' (use --demo and/or --verbose)" >&2; exit 64 ;;
  esac
done

missing=()
for p in "${PACKAGES[@]}"; do
  [[ $p == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  [[ -n "$verbose" ]] && echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "setup: missing Debian packages: ${missing[*]} — run this script as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi

echo "setup: installing ${missing[*]}" >&2
made_policy=""
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  made_policy=1
fi
cleanup() { [[ -n "$made_policy" ]] && rm -f /usr/sbin/policy-rc.d; return 0; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp -t analog-remote-setup.XXXXXX)
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "setup: apt-get failed (log above): check the network to Debian's mirrors, then run again" >&2
  exit 1
fi
rm -f "$log"
echo "setup: done" >&2
