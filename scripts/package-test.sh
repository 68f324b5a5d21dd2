#!/usr/bin/env bash
# CI: the Debian package, installed into a clean Debian 12 root and run there.
#
#   scripts/package-test.sh [--systemd] [--release]   (as root; run by ./run.sh test with --systemd)
#
# --systemd: then, in the same root, the service under a real systemd (scripts/systemd-test.sh;
# sharing the root saves a second debootstrap).
# --release: the package a robot gets (release build, RELR-packed, no exported symbols) instead
# of CI's debug build (same files, quicker to compile): its installed size and idle RSS are the
# figures to quote. Run by hand (a cold release build takes 20+ minutes on 2 cores).
# Builds the two .debs (scripts/build-deb.sh --debug unless --release),
# checks install.sh's layout under /usr/local (DESTDIR), checks the unit with `systemd-analyze verify`, makes a fresh root with
# `debootstrap --variant=minbase bookworm` from the mirror apt on this machine uses, installs the
# package there with apt (which pulls the declared dependencies) and runs the installed binary:
# --version, `man analog-remote`, the completion files, the service user and its groups, and
# `receive --config /etc/analog-remote/receive.toml --board sim` from the installed example
# config (in a network namespace of its own, stopped by its pid). The robot's footprint: apt
# installs at most 10 packages for it, none of X11, Wayland or PulseAudio (no SDL2), the binary
# is stripped, `--input gamepad` without SDL2 is one line and exit 3; the installed size and the
# idle receiver's memory (RSS, Pss) are printed. Then the second package, analog-remote-web: without
# it `analog-remote web` is one line and exit 127; installed, it serves the phone page. Nothing is cached: the root is made under a
# temporary folder and removed on every exit path, /proc is unmounted.
# Last line: `package: N passed, M failed` (or `SKIPPED: why`). Bounded: each step has a timeout.
set -uo pipefail
cd "$(dirname "$0")/.."
with_systemd=""
build=(--debug)
for argument in "$@"; do
  case "$argument" in
    --systemd) with_systemd=1 ;;
    --release) build=() ;;
    *) echo "package-test.sh: unknown argument $argument (use --systemd, --release)" >&2; exit 64 ;;
  esac
done
# The robot's package may bring at most this many packages onto debootstrap's minbase.
max_packages=10

if [[ $(id -u) -ne 0 ]]; then echo "SKIPPED: package test needs root (debootstrap, chroot)"; exit 0; fi
for tool in debootstrap dpkg-deb chroot unshare systemd-analyze; do
  command -v "$tool" >/dev/null || { echo "SKIPPED: package test needs $tool (scripts/setup.sh installs it)"; exit 0; }
done

# The mirror apt on this machine uses (deb822 sources first, then the one-line format).
mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null)
[[ -n $mirror ]] || mirror=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' /etc/apt/sources.list 2>/dev/null)
[[ -n $mirror ]] || { echo "SKIPPED: no Debian mirror in apt's sources"; exit 0; }

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok    $1"; }
fail() { failed=$((failed + 1)); echo "FAIL  $1" >&2; }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }

work=$(mktemp -d -t ar-pkg-$$.XXXXXX)
root=$work/root
pid=""
cleanup() {
  [[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null
  for m in "$root/proc" "$root/dev/pts"; do mountpoint -q "$m" 2>/dev/null && umount -l "$m"; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

started=$SECONDS
# 1. The package.
if ! debs=$(timeout 2700 bash scripts/build-deb.sh "${build[@]}" --output "$work" 2>"$work/build.log"); then
  cat "$work/build.log" >&2
  fail "build-deb.sh builds the packages"
  echo "package: $passed passed, $failed failed"; exit 1
fi
{ read -r deb; read -r web_deb; } <<<"$debs"
pass "build-deb.sh builds $(basename "$deb") and $(basename "${web_deb:-(no second package)}") ($((SECONDS - started)) s)"
check "the robot's package holds no web server (no analog-remote-web)" bash -c "! dpkg-deb -c '$deb' | grep -q 'analog-remote-web'"
check "analog-remote-web depends on analog-remote of its own version" \
  bash -c "dpkg-deb -f '$web_deb' Depends | grep -q \"^analog-remote (= \$(dpkg-deb -f '$deb' Version))\""
check "the package declares its runtime dependencies" \
  bash -c "dpkg-deb -f '$deb' Depends | grep -q 'libavahi-compat-libdnssd1, libasound2, libqrencode4, libsodium23'"
check "SDL2 is only suggested (no desktop on the robot)" \
  bash -c "! dpkg-deb -f '$deb' Depends Recommends | grep -q sdl && dpkg-deb -f '$deb' Suggests | grep -q 'libsdl2-2.0-0'"

# 1b. install.sh's own layout under the default prefix (the build is already there: seconds).
if DESTDIR=$work/stage timeout 600 bash scripts/install.sh "${build[@]}" >"$work/install.log" 2>&1; then
  layout_ok() {
    local p=$work/stage/usr/local f
    for f in "$p/bin/analog-remote" "$p/bin/analog-remote-web" "$p/share/man/man1/analog-remote-web.1.gz" "$p/share/man/man1/analog-remote.1.gz" "$p/share/bash-completion/completions/analog-remote" \
             "$p/share/zsh/site-functions/_analog-remote" "$p/share/fish/vendor_completions.d/analog-remote.fish" \
             "$p/share/doc/analog-remote/examples/receive.toml" "$work/stage/etc/udev/rules.d/70-analog-remote.rules" \
             "$work/stage/etc/analog-remote/receive.toml"; do
      [[ -s $f ]] || { echo "missing $f" >&2; return 1; }
    done
    grep -qx 'ExecStart=/usr/local/bin/analog-remote receive --quiet --config /etc/analog-remote/receive.toml' \
      "$p/lib/systemd/system/analog-remote.service"
  }
  check "install.sh (DESTDIR, default prefix /usr/local) installs every file, the unit pointing at /usr/local/bin" layout_ok
else
  cat "$work/install.log" >&2
  fail "install.sh (DESTDIR, default prefix /usr/local)"
fi

# 2. The unit, as systemd reads it (ExecStart pointed at the packaged binary, which must exist).
mkdir -p "$work/x" && dpkg-deb -x "$deb" "$work/x"
sed "s|/usr/bin/analog-remote|$work/x/usr/bin/analog-remote|" "$work/x/usr/lib/systemd/system/analog-remote.service" > "$work/analog-remote.service"
verify() { local out; out=$(systemd-analyze verify --man=no "$work/analog-remote.service" 2>&1) && [[ -z $out ]] || { echo "$out" >&2; return 1; }; }
check "systemd-analyze verify passes on the unit, without a warning" verify

# 3. A clean Debian root, the package installed with apt.
t=$SECONDS
if ! timeout 300 debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1; then
  tail -20 "$work/debootstrap.log" >&2
  fail "debootstrap --variant=minbase bookworm from $mirror"
  echo "package: $passed passed, $failed failed"; exit 1
fi
pass "debootstrap made a bookworm root ($((SECONDS - t)) s)"
mount --bind /proc "$root/proc"
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d" && chmod +x "$root/usr/sbin/policy-rc.d"
cp "$deb" "$root/tmp/analog-remote.deb"
in_root=(chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive)
installed() { chroot "$root" dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" { print $2 }' | sort; }
t=$SECONDS
installed >"$work/before.txt"
if timeout 400 "${in_root[@]}" sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends /tmp/analog-remote.deb' >"$work/apt.log" 2>&1; then
  pass "apt-get installs the package and its dependencies ($((SECONDS - t)) s)"
else
  tail -20 "$work/apt.log" >&2
  fail "apt-get installs the package and its dependencies"
  echo "package: $passed passed, $failed failed"; exit 1
fi
installed >"$work/after.txt"
mapfile -t added < <(comm -13 "$work/before.txt" "$work/after.txt")
echo "      apt installed ${#added[@]} packages on minbase: ${added[*]}"
check "the robot's package installs at most $max_packages packages on minbase (${#added[@]})" test "${#added[@]}" -le "$max_packages"
desktop=$(printf '%s\n' "${added[@]}" | grep -E '^(libx11|libwayland|libpulse)' | tr '\n' ' ')
check "none of them is libx11, libwayland or libpulse${desktop:+ (got: $desktop)}" test -z "$desktop"
if ! timeout 300 "${in_root[@]}" apt-get install -y -qq --no-install-recommends man-db >>"$work/apt.log" 2>&1; then
  tail -20 "$work/apt.log" >&2
  fail "apt-get installs man-db (to read the manual)"
fi

# 4. The installed files.
version=$(dpkg-deb -f "$deb" Version)
check "analog-remote --version prints analog-remote $version" bash -c "[[ \$(chroot '$root' analog-remote --version) == 'analog-remote $version' ]]"
check "every library the binary needs is there" bash -c "! chroot '$root' ldd /usr/bin/analog-remote | grep -q 'not found'"
check "the installed binary is stripped" bash -c "! readelf -S '$root/usr/bin/analog-remote' | grep -q ' .symtab '"
configuration=$([[ ${#build[@]} -eq 0 ]] && echo release || echo debug)
echo "      $configuration package: installed size $(dpkg-deb -f "$deb" Installed-Size) KiB (the binary: $(( $(stat -c %s "$root/usr/bin/analog-remote") / 1024 )) KiB), the .deb $(( $(stat -c %s "$deb") / 1024 )) KiB"
# A robot has no SDL2: asking for a gamepad is one line on stderr and exit 3 (device unavailable).
gamepad_without_sdl() {
  local out status
  out=$(unshare --net chroot "$root" env -i PATH=/usr/bin:/bin analog-remote control --peer 127.0.0.1:27183 --input gamepad 2>&1 </dev/null)
  status=$?
  echo "      control --input gamepad: exit $status: $out"
  [[ $status -eq 3 && $(wc -l <<<"$out") -eq 1 && $out == *"sudo apt-get install libsdl2-2.0-0"* ]]
}
check "without SDL2, control --input gamepad is one line naming libsdl2-2.0-0, exit 3" gamepad_without_sdl
check "man analog-remote shows the manual" bash -c "chroot '$root' env MANPAGER=cat MANWIDTH=100 man analog-remote 2>/dev/null | grep -q 'receive'"
check "bash completion installed" grep -q "analog-remote" "$root/usr/share/bash-completion/completions/analog-remote"
check "zsh completion installed" grep -q "#compdef analog-remote" "$root/usr/share/zsh/vendor-completions/_analog-remote"
check "fish completion installed" grep -q "analog-remote" "$root/usr/share/fish/vendor_completions.d/analog-remote.fish"
check "the service unit and udev rule installed" test -s "$root/usr/lib/systemd/system/analog-remote.service" -a -s "$root/usr/lib/udev/rules.d/70-analog-remote.rules"
check "the example config is a conffile" bash -c "chroot '$root' dpkg-query -W -f='\${Conffiles}' analog-remote | grep -q /etc/analog-remote/receive.toml"
check "the installed config is 0640 root:analog-remote (no student reads it)" \
  bash -c "[[ \$(chroot '$root' stat -c '%a %U:%G' /etc/analog-remote/receive.toml) == '640 root:analog-remote' ]]"
check "postinst made the system user analog-remote in dialout and audio" \
  bash -c "chroot '$root' id -nG analog-remote | tr ' ' '\n' | grep -qx dialout && chroot '$root' id -nG analog-remote | tr ' ' '\n' | grep -qx audio"

# 5. The receiver from the installed example config, as the service user, in a network
#    namespace of its own (only its loopback: no traffic leaves, the fixed port is free there).
out=$work/receive.out
unshare --net chroot --userspec=analog-remote:analog-remote "$root" \
  env -i PATH=/usr/bin:/bin AVAHI_COMPAT_NOWARN=1 \
  analog-remote receive --config /etc/analog-remote/receive.toml --board sim --no-advertise --quiet >"$out" 2>&1 &
pid=$!
for _ in $(seq 200); do grep -q "receiving on udp port" "$out" && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
check "receive --config /etc/analog-remote/receive.toml --board sim starts" grep -q "receiving on udp port" "$out"
# Idle memory of the packaged receiver (figures; the bound only catches a gross regression).
memory() {
  local rss pss anon file threads
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
  threads=$(awk '/^Threads:/ { print $2 }' "/proc/$pid/status")
  pss=$(awk '/^Pss:/ { print $2 }' "/proc/$pid/smaps_rollup")
  anon=$(awk '/^Pss_Anon:/ { print $2 }' "/proc/$pid/smaps_rollup")
  file=$(awk '/^Pss_File:/ { print $2 }' "/proc/$pid/smaps_rollup")
  echo "      idle receiver ($configuration package): RSS $((rss / 1024)).$((rss % 1024 * 10 / 1024)) MiB, Pss $((pss / 1024)).$((pss % 1024 * 10 / 1024)) MiB (anon ${anon} KiB, file ${file} KiB), $threads threads"
  echo "      largest resident mappings (KiB):"
  awk '/^[0-9a-f]+-[0-9a-f]+ / { name = (NF >= 6 ? $6 : "[anon]") } /^Rss:/ { rss[name] += $2 } END { for (n in rss) print rss[n], n }' "/proc/$pid/smaps" \
    | sort -rn | awk 'NR <= 6 { printf "        %6d %s\n", $1, $2 }'
  [[ -n $rss && $rss -lt 65536 ]]
}
check "the idle receiver's RSS is under 64 MiB" memory
kill -TERM "$pid" 2>/dev/null
status=124
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || { wait "$pid"; status=$?; break; }; sleep 0.1; done
pid=""
check "it stops on SIGTERM with exit 0 and its summary" bash -c "[[ $status -eq 0 ]] && grep -q '^summary ' '$out'"
check "the example config's black box wrote its exit file" bash -c "ls '$root'/var/lib/analog-remote/black-box/black-box-*-exit.jsonl >/dev/null"
[[ $failed -eq 0 ]] || cat "$out" >&2

# 6. The teacher's page, from the second package. Without it `analog-remote web` says how to get
#    it (exit 127); with it, the page is served (plain HTTP on loopback, in a namespace of its own).
web_missing() {
  local out status
  out=$(unshare --net chroot "$root" env -i PATH=/usr/bin:/bin analog-remote web --peer 127.0.0.1:27183 2>&1 </dev/null)
  status=$?
  echo "      analog-remote web without its package: exit $status: $out"
  [[ $status -eq 127 && $(wc -l <<<"$out") -eq 1 && $out == *"analog-remote-web"* ]]
}
check "without analog-remote-web, analog-remote web is one line naming the package, exit 127" web_missing
cp "$web_deb" "$root/tmp/analog-remote-web.deb"
if timeout 300 "${in_root[@]}" apt-get install -y -qq --no-install-recommends /tmp/analog-remote-web.deb >>"$work/apt.log" 2>&1; then
  pass "apt-get installs analog-remote-web beside it"
  echo "      web package: installed size $(dpkg-deb -f "$web_deb" Installed-Size) KiB, the .deb $(( $(stat -c %s "$web_deb") / 1024 )) KiB"
  # In one namespace: the server on a fixed port, the page fetched with bash's /dev/tcp, the server
  # stopped by its pid.
  serve_page() {
    cat > "$root/tmp/serve-page.sh" <<'SCRIPT'
analog-remote web --plain-http --host 127.0.0.1 --port 18080 --peer 127.0.0.1:27183 --no-qr --quiet >/tmp/web.out 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "serving http" /tmp/web.out && break; sleep 0.1; done
page=""
if exec 3<>/dev/tcp/127.0.0.1/18080; then
  printf 'GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  page=$(cat <&3)
fi
kill -TERM "$pid"; wait "$pid"
[[ $page == "HTTP/1.1 200"* && $page == *"<html"* ]] || { cat /tmp/web.out; echo "${page:0:300}"; exit 1; }
SCRIPT
    # lo is down in a new namespace: the host's `ip` raises it before entering the root (no iproute2 there).
    unshare --net bash -c "ip link set lo up && chroot '$root' env -i PATH=/usr/bin:/bin bash /tmp/serve-page.sh"
  }
  check "analog-remote web (the installed package) serves the phone page" serve_page
  check "man analog-remote-web shows its manual" bash -c "chroot '$root' env MANPAGER=cat MANWIDTH=100 man analog-remote-web 2>/dev/null | grep -q 'phone'"
  # The root goes on to the service's test as a robot has it: without the web.
  timeout 120 "${in_root[@]}" dpkg -r analog-remote-web >>"$work/apt.log" 2>&1 || fail "dpkg -r analog-remote-web"
else
  tail -20 "$work/apt.log" >&2
  fail "apt-get installs analog-remote-web beside it"
fi

echo "package test took $((SECONDS - started)) s"
echo "package: $passed passed, $failed failed"
status=0
[[ $failed -eq 0 ]] || status=1
if [[ -n $with_systemd ]]; then
  umount -l "$root/proc"
  timeout 600 bash scripts/systemd-test.sh --root "$root" || status=1
  echo "package and systemd tests took $((SECONDS - started)) s"
fi
exit "$status"
