#!/usr/bin/env bash
# Builds the two Debian packages from the files scripts/install.sh installs (prefix /usr):
#
#   scripts/build-deb.sh [--debug] [--output DIR]      → DIR/analog-remote_VERSION_ARCH.deb
#                                                        DIR/analog-remote-web_VERSION_ARCH.deb (DIR = .)
#
# analog-remote is the robot and the driver (what the service needs); analog-remote-web, the phone
# page and the teacher's dashboard, depends on it (same version). stdout: the two paths, in that order.
#
# Its runtime dependencies are the C libraries the binary links (the Swift runtime is linked in
# statically); the script checks that every library the binary needs belongs to a package the
# control file names, so a new dependency cannot be forgotten. postinst creates the system user
# analog-remote in the groups dialout and audio, and reloads systemd and udev when they run;
# nothing is started or enabled. /etc/analog-remote/receive.toml is a conffile.
set -euo pipefail
# set -e ends the script without a word; say which command failed, so CI's log shows it.
trap 'echo "build-deb.sh: line $LINENO failed (exit $?): $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."

output=.
install_args=()
while (($#)); do
  case "$1" in
    --debug) install_args+=(--debug); shift ;;
    --output) output=${2:?--output needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "build-deb.sh: unknown argument $1 (use --debug, --output DIR)" >&2; exit 64 ;;
  esac
done

# Debian 12 (bookworm) runtime packages (apt-cache policy checked): Avahi's Bonjour compat
# library, ALSA, libqrencode (the receiver's pairing QR code; one small package), libsodium
# (the authenticated envelope's AEAD, `--accept secret`; one small package, no dependencies but libc);
# avahi-daemon announces the receiver (recommended: --no-advertise works without).
# SDL2 is only suggested: the binary opens it at run time when a gamepad input is asked for
# (Sources/Gamepad/SDLLibrary.swift), and on Debian it pulls X11, Wayland, PulseAudio and codecs
# (44 packages instead of 10 on a minimal system). Not Recommends: apt installs those by default,
# which would put the desktop back on every robot. A driver's machine adds libsdl2-2.0-0
# (`analog-remote control --input gamepad` says so in one line, exit 3, when it is missing).
depends="libc6, libstdc++6, libgcc-s1, libavahi-compat-libdnssd1, libasound2, libqrencode4, libsodium23, adduser | passwd"
recommends="avahi-daemon, dbus"
suggests="libsdl2-2.0-0, man-db, analog-remote-web"

stage=$(mktemp -d -t analog-remote-deb.XXXXXX)
web_stage=$(mktemp -d -t analog-remote-web-deb.XXXXXX)
trap 'rm -rf "$stage" "$web_stage"' EXIT
DESTDIR=$stage bash scripts/install.sh --prefix /usr "${install_args[@]}"
binary=$stage/usr/bin/analog-remote
# The web's files go to the second package.
for f in usr/bin/analog-remote-web usr/share/man/man1/analog-remote-web.1.gz usr/share/bash-completion/completions/analog-remote-web \
         usr/share/zsh/vendor-completions/_analog-remote-web usr/share/fish/vendor_completions.d/analog-remote-web.fish; do
  install -d "$web_stage/$(dirname "$f")"
  mv "$stage/$f" "$web_stage/$f"
done
web=$web_stage/usr/bin/analog-remote-web

# Stripped, as Debian ships binaries (the static Swift runtime makes it large either way).
strip --strip-unneeded "$binary" "$web"
# `--version` prints "analog-remote 0.1.0": the package version is its last word.
version=$("$binary" --version | awk '{print $NF}')
arch=$(dpkg --print-architecture)

# Every shared library a binary needs must come from a declared dependency.
# Trap: no `producer | awk '… exit'` or `| head` here. Under pipefail the producer's SIGPIPE, when
# the reader quits before it has written everything, fails the assignment and set -e ends the
# script (CI lost a run to `ldconfig -p | awk … exit`). The cache is read once; readers read all.
cache=$(ldconfig -p)
owner() { dpkg -S "$1" 2>/dev/null | awk -F: 'NR == 1 { print $1 }' || true; }
# check_libraries BINARY DEPENDS
check_libraries() {
  local lib path pkg missing=()
  while read -r lib; do
    [[ -z $lib ]] && continue
    path=$(awk -v l="$lib" '$1 == l && !found { print $NF; found = 1 }' <<<"$cache")
    [[ -n $path ]] || { missing+=("$lib (not found)"); continue; }
    # dpkg knows the path it shipped (/lib/… on a merged-/usr system), then the resolved one.
    pkg=$(owner "$path")
    [[ -n $pkg ]] || pkg=$(owner "$(readlink -f "$path")")
    [[ -n $pkg && ", $2," == *", $pkg"[,\ ]* ]] || missing+=("$lib from ${pkg:-?}")
  done < <(objdump -p "$1" | awk '$1 == "NEEDED" { print $2 }')
  if ((${#missing[@]})); then
    echo "build-deb.sh: $(basename "$1") needs libraries no declared dependency provides: ${missing[*]}" >&2
    echo "build-deb.sh: add their packages to depends= in $0" >&2
    exit 1
  fi
}
check_libraries "$binary" "$depends"
check_libraries "$web" "$depends"

install -d "$stage/DEBIAN" "$stage/usr/share/doc/analog-remote"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat > "$stage/DEBIAN/control" <<CONTROL
Package: analog-remote
Version: $version
Architecture: $arch
Maintainer: AnalogRemote <analog-remote@localhost>
Installed-Size: $size
Depends: $depends
Recommends: $recommends
Suggests: $suggests
Section: misc
Priority: optional
Description: drive a robot board from another machine on the LAN
 Controllers (keyboard, script, stdin, gamepad) send an 8-byte state over UDP;
 the receiver on the robot's machine finds its controller by DNS-SD, stops the
 motors when the link goes quiet, and writes the programland teaching kit's
 memory map over USB serial or USB-MIDI. Ships the analog-remote service
 (Type=notify, watchdog), a udev rule naming the kit /dev/programland, and
 \`analog-remote doctor\`. Gamepads need SDL2 (libsdl2-2.0-0, suggested): it is
 loaded only when a gamepad input is asked for, so a robot installs no desktop.
 The phone page and the teacher's dashboard (\`analog-remote web\`) are the
 analog-remote-web package.
CONTROL
echo "/etc/analog-remote/receive.toml" > "$stage/DEBIAN/conffiles"
cat > "$stage/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
  if ! getent passwd analog-remote >/dev/null; then
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
      --comment "AnalogRemote receiver" analog-remote
  fi
  usermod -aG dialout,audio analog-remote
  # The config is readable by the service, not by students (docs/security.md).
  chown root:analog-remote /etc/analog-remote/receive.toml
  chmod 0640 /etc/analog-remote/receive.toml
  # The service's state directory (systemd's StateDirectory= makes it too): the black box files.
  install -d -o analog-remote -g analog-remote -m 0750 /var/lib/analog-remote
  if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
  if command -v udevadm >/dev/null 2>&1 && [ -e /run/udev/control ]; then
    udevadm control --reload-rules || true
    udevadm trigger --subsystem-match=tty || true
  fi
fi
exit 0
POSTINST
cat > "$stage/DEBIAN/prerm" <<'PRERM'
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
  systemctl stop analog-remote.service 2>/dev/null || true
fi
exit 0
PRERM
cat > "$stage/DEBIAN/postrm" <<'POSTRM'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
if [ "$1" = purge ] && getent passwd analog-remote >/dev/null; then
  userdel analog-remote || true
fi
exit 0
POSTRM
chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm" "$stage/DEBIAN/postrm"
cat > "$stage/usr/share/doc/analog-remote/copyright" <<'COPYRIGHT'
AnalogRemote — see the project's repository for its licence.
COPYRIGHT

# The web's package: the phone page's and the dashboard's server (it links the core's libraries too).
install -d "$web_stage/DEBIAN" "$web_stage/usr/share/doc/analog-remote-web"
cp "$stage/usr/share/doc/analog-remote/copyright" "$web_stage/usr/share/doc/analog-remote-web/copyright"
cat > "$web_stage/DEBIAN/control" <<CONTROL
Package: analog-remote-web
Version: $version
Architecture: $arch
Maintainer: AnalogRemote <analog-remote@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$web_stage" | cut -f1)
Depends: analog-remote (= $version), $depends
Section: misc
Priority: optional
Description: phone page and teacher's dashboard for AnalogRemote robots
 \`analog-remote web\` serves a page (HTTPS) on which a phone drives a robot by
 tilting, and the teacher's dashboard: the class's robots, who drives which,
 stop all, the lesson's log. For a teacher's laptop; robots need only the
 analog-remote package.
CONTROL

mkdir -p "$output"
deb=$output/analog-remote_${version}_${arch}.deb
web_deb=$output/analog-remote-web_${version}_${arch}.deb
# gzip: xz takes a minute on a large binary for a few MB less.
dpkg-deb --root-owner-group -Zgzip --build "$stage" "$deb" >/dev/null
dpkg-deb --root-owner-group -Zgzip --build "$web_stage" "$web_deb" >/dev/null
echo "$deb"
echo "$web_deb"
