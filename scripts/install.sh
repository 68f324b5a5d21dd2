#!/usr/bin/env bash
# Builds analog-remote (the robot and the driver) and analog-remote-web (the phone page and the
# teacher's dashboard) and installs them with their man pages, shell completions, example config,
# systemd unit and udev rule (docs/robot-install.md). scripts/build-deb.sh splits the result into
# the two packages.
#
#   sudo scripts/install.sh [--prefix /usr/local] [--debug]
#   DESTDIR=/tmp/stage scripts/install.sh --prefix /usr      (staging: no system changes)
#   scripts/install.sh [--debug] --build-only                (the build alone: ./run.sh test starts it early)
#
# What goes where (PREFIX = /usr/local unless --prefix):
#   PREFIX/bin/analog-remote                          release build, Swift runtime linked in statically
#   PREFIX/bin/analog-remote-web                      the same build (`analog-remote web` runs it)
#   PREFIX/share/man/man1/analog-remote{,-web}.1.gz   from swift-argument-parser's generate-manual plugin
#   PREFIX/share/bash-completion/completions/analog-remote{,-web}
#   PREFIX/share/zsh/{vendor-completions|site-functions}/_analog-remote{,-web}
#   PREFIX/share/fish/vendor_completions.d/analog-remote{,-web}.fish
#   PREFIX/share/doc/analog-remote/examples/          receive.toml, control.toml, stock-map.toml, motors-map.toml
#   PREFIX/lib/systemd/system/analog-remote.service   ExecStart pointing at PREFIX/bin
#   /usr/lib/udev/rules.d (PREFIX=/usr) or /etc/udev/rules.d: 70-analog-remote.rules
#   /etc/analog-remote/receive.toml                   the example, only if there is none yet
# As root without DESTDIR it also creates the system user analog-remote (groups dialout, audio)
# and reloads systemd and udev. Nothing is started or enabled: `systemctl enable --now analog-remote`.
#
# Builds happen in .build-static (static Swift runtime: the binary needs only the C libraries
# listed in scripts/build-deb.sh's Depends), separate from the tests' .build.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
configuration=release
build_only=""
while (($#)); do
  case "$1" in
    --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --debug) configuration=debug; shift ;;
    --build-only) build_only=1; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument $1 (use --prefix DIR, --debug, --build-only)" >&2; exit 64 ;;
  esac
done
[[ $prefix == /* ]] || { echo "install.sh: --prefix must be absolute: $prefix" >&2; exit 64; }
destdir=${DESTDIR:-}
scratch=.build-static

# One build: the plugin builds every product (statically, -Xswiftc -static-stdlib) and runs
# generate-manual on the binary; the man page is generated, never committed.
echo "install.sh: building analog-remote and analog-remote-web ($configuration, static Swift runtime) — this takes a while" >&2
log=$(mktemp -t analog-remote-install.XXXXXX)
trap 'rm -f "$log"' EXIT
# A release binary is linked for a small robot's memory: lld packs its ~100k relative
# relocations (RELR: kilobytes instead of megabytes that the loader reads at every start), and
# exports no dynamic symbols (SwiftPM exports every symbol of an executable on Linux; nothing
# dlopens us or looks a symbol up in us). Debug builds keep SwiftPM's defaults (CI's quick path).
link=()
[[ $configuration == release ]] && link=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic)
if ! swift package -Xswiftc -static-stdlib "${link[@]}" --scratch-path "$scratch" \
      plugin generate-manual --configuration "$configuration" >"$log" 2>&1; then
  cat "$log" >&2
  echo "install.sh: the build failed (log above)" >&2
  exit 1
fi
binary=$scratch/$configuration/analog-remote
web=$scratch/$configuration/analog-remote-web
manual=$(find "$scratch/plugins/GenerateManual/outputs" -name analog-remote.1 2>/dev/null | head -1)
web_manual=$(find "$scratch/plugins/GenerateManual/outputs" -name analog-remote-web.1 2>/dev/null | head -1)
for b in "$binary" "$web"; do [[ -x $b ]] || { echo "install.sh: no binary at $b" >&2; exit 1; }; done
[[ -n $manual && -n $web_manual ]] || { echo "install.sh: the generate-manual plugin wrote no analog-remote.1 or analog-remote-web.1" >&2; exit 1; }
if [[ -n $build_only ]]; then echo "install.sh: built $binary (--build-only: nothing installed)" >&2; exit 0; fi

root=$destdir$prefix
install -d "$root/bin" "$root/share/man/man1" "$root/share/bash-completion/completions" \
  "$root/share/fish/vendor_completions.d" "$root/share/doc/analog-remote/examples" "$root/lib/systemd/system"
install -m 0755 "$binary" "$root/bin/analog-remote"
install -m 0755 "$web" "$root/bin/analog-remote-web"
gzip -9n -c "$manual" > "$root/share/man/man1/analog-remote.1.gz"
gzip -9n -c "$web_manual" > "$root/share/man/man1/analog-remote-web.1.gz"
chmod 0644 "$root/share/man/man1/analog-remote.1.gz" "$root/share/man/man1/analog-remote-web.1.gz"

if [[ $prefix == /usr ]]; then zsh_dir=share/zsh/vendor-completions; udev_dir=$destdir/usr/lib/udev/rules.d
else zsh_dir=share/zsh/site-functions; udev_dir=$destdir/etc/udev/rules.d; fi
install -d "$root/$zsh_dir" "$udev_dir" "$destdir/etc/analog-remote"
"$binary" --generate-completion-script bash > "$root/share/bash-completion/completions/analog-remote"
"$binary" --generate-completion-script zsh > "$root/$zsh_dir/_analog-remote"
"$binary" --generate-completion-script fish > "$root/share/fish/vendor_completions.d/analog-remote.fish"
"$web" --generate-completion-script bash > "$root/share/bash-completion/completions/analog-remote-web"
"$web" --generate-completion-script zsh > "$root/$zsh_dir/_analog-remote-web"
"$web" --generate-completion-script fish > "$root/share/fish/vendor_completions.d/analog-remote-web.fish"

install -m 0644 packaging/receive.toml packaging/control.toml config-examples/stock-map.toml config-examples/motors-map.toml "$root/share/doc/analog-remote/examples/"
sed "s|/usr/bin/analog-remote|$prefix/bin/analog-remote|" packaging/analog-remote.service > "$root/lib/systemd/system/analog-remote.service"
chmod 0644 "$root/lib/systemd/system/analog-remote.service"
install -m 0644 packaging/70-analog-remote.rules "$udev_dir/70-analog-remote.rules"
# 0640 root:analog-remote (the group is set below, once the user exists): the service reads it,
# students do not (docs/security.md). Secrets go into key files of their own, mode 600.
if [[ ! -e $destdir/etc/analog-remote/receive.toml ]]; then
  install -m 0640 packaging/receive.toml "$destdir/etc/analog-remote/receive.toml"
fi

if [[ -z $destdir && $(id -u) -eq 0 ]]; then
  if ! getent passwd analog-remote >/dev/null; then
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
      --comment "AnalogRemote receiver" analog-remote
  fi
  usermod -aG dialout,audio analog-remote
  chown root:analog-remote /etc/analog-remote/receive.toml
  chmod 0640 /etc/analog-remote/receive.toml
  if [[ -d /run/systemd/system ]]; then systemctl daemon-reload; fi
  if command -v udevadm >/dev/null && [[ -e /run/udev/control ]]; then
    udevadm control --reload-rules && udevadm trigger --subsystem-match=tty || true
  fi
  echo "install.sh: installed under $prefix; next: edit /etc/analog-remote/receive.toml, then sudo systemctl enable --now analog-remote" >&2
else
  echo "install.sh: installed into ${destdir:-}$prefix" >&2
fi
