#!/usr/bin/env python3
"""Benchmark (measures, asserts nothing): what the teacher's dashboard costs.

1. The web server with N watched robots (default 30) each sending 2 watch-reports a second
   (Protocol.md §7.12, signed as a receiver signs them) and one dashboard open in headless Chromium: the server's CPU over
   --seconds, from /proc/PID/stat (user + system), as a percentage of one core. The robots are
   stand-ins on loopback that answer every `teacher` datagram with reports, so only the server
   is measured.
2. One real receiver driven at 50 Hz by `control`: its CPU with and without a dashboard
   watching it (the receive path must not notice).

Usage: teacher_bench.py BINARY [--robots N] [--seconds S]. Prints one line per figure and
`teacher-bench: …` last. Every process it starts is stopped on every way out.
"""
import hashlib
import hmac
import os
import re
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import web_browser_test as wbt  # noqa: E402
from webtest_ws import DevTools  # noqa: E402

BINARY = wbt.BINARY
ROBOTS = int(sys.argv[sys.argv.index("--robots") + 1]) if "--robots" in sys.argv else 30
SECONDS = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 20.0
KEY = "bench key for the class"
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def s8(s):
    b = s.encode()
    return bytes([len(b)]) + b


# The teacher key's MAC key (Protocol.md §7.6: a passphrase is stretched with scrypt).
MAC_KEY = hashlib.scrypt(KEY.encode(), salt=b"AnalogRemote teacher key v1", n=2 ** 15, r=8, p=1, maxmem=64 * 1024 * 1024, dklen=32)


def report(serial, robot, name, watch_nonce, uptime):
    """A watch report signed for the watch whose command carried `watch_nonce` (§7.12). Its uptime
    moves on each second as a real receiver's does, so each row changes once a second; its robot id
    stays (0x1000 + `robot`)."""
    head = bytes([0x41, 0x52, 1, 0x0E]) + struct.pack(">IIIHH", 0x0BE7C4, 0, 0, 0, 1)
    body = struct.pack(">IIBBBQHHHHI", serial, uptime, 1, 0, 0, 0x1000 + robot, 3, 7, 0, 50, 0)
    body += b"".join(s8(x) for x in (name, "Student", "", "motors profile", "sim", "bench", ""))
    mac = hmac.new(MAC_KEY, b"AR watch report" + watch_nonce + body, hashlib.sha256).digest()[:16]
    return head + body + mac


def query_reply(nonce, name):
    """The signed answer to a stop-all query (§7.6): what the dashboard proves a robot by before it
    watches it. Outcome 2 (not holding), no robot id: the robot is then addressed by its signed name."""
    head = bytes([0x41, 0x52, 1, 0x0A]) + struct.pack(">IIIHH", 0x0BE7C4, 0, 0, 0, 1)
    body = nonce + bytes([2]) + s8(name) + s8("")
    mac = hmac.new(MAC_KEY, b"AR stop-all reply" + body, hashlib.sha256).digest()[:16]
    return head + body + mac


class StandIns:
    """N robots on loopback: each answers a stop-all query with a signed reply, and a `teacher`
    datagram by reporting to its sender twice a second."""

    def __init__(self, n):
        self.socks = []
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            s.setblocking(False)
            self.socks.append(s)
        self.watchers = [None] * n
        self.sent = 0
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def ports(self):
        return [s.getsockname()[1] for s in self.socks]

    def run(self):
        serial, nxt = 0, time.monotonic()
        started = nxt - 60
        while not self.stop:
            for i, s in enumerate(self.socks):
                try:
                    while True:
                        data, addr = s.recvfrom(2048)
                        # A stop-all query (action 3): the signed reply that proves the key.
                        if len(data) >= 37 and data[:2] == b"AR" and data[3] == 0x09 and data[20] == 3:
                            s.sendto(query_reply(data[29:37], f"robot {i + 1}"), addr)
                        # A watch (action 1): report to its sender, signed for its nonce.
                        if len(data) >= 37 and data[:2] == b"AR" and data[3] == 0x0C and data[20] == 1:
                            self.watchers[i] = (addr, data[29:37])
                except BlockingIOError:
                    pass
            now = time.monotonic()
            if now >= nxt:
                nxt += 0.5
                serial += 1
                for i, s in enumerate(self.socks):
                    if self.watchers[i]:
                        addr, nonce = self.watchers[i]
                        s.sendto(report(serial, i, f"robot {i + 1}", nonce, int(time.monotonic() - started)), addr)
                        self.sent += 1
            time.sleep(0.01)


def main():
    tmp = tempfile.mkdtemp(prefix="ar-teacher-bench-")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    stand = None
    try:
        keyfile = f"{tmp}/key"
        with open(keyfile, "w") as f:
            f.write(KEY)
        os.chmod(keyfile, 0o600)   # a key file only its owner may read (docs/security.md)
        stand = StandIns(ROBOTS)
        env = dict(os.environ, XDG_STATE_HOME=f"{tmp}/state")
        # A real receiver too, driven at 50 Hz (part 2).
        receiver = wbt.Proc([BINARY, "receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim", "--name", "real",
                             "--teacher-key", KEY], name="receiver")
        _, line, _ = receiver.wait_line(r"^receiving on udp port \d+")
        rport = int(line.rsplit(" ", 1)[1])
        with open(f"{tmp}/drive.script", "w") as f:
            f.write("0 0 0\n300 0.2 1\n600000 0.2 1\n")
        wbt.Proc([BINARY, "control", "--quiet", "--peer", f"127.0.0.1:{rport}", "--name", "Driver", "--rate", "50",
                  "--input", f"script:{tmp}/drive.script"], name="driver")
        time.sleep(2)
        c0 = cpu_seconds(receiver.p.pid)
        time.sleep(SECONDS / 2)
        unwatched = (cpu_seconds(receiver.p.pid) - c0) / (SECONDS / 2) * 100

        web = wbt.Proc([BINARY, "web", "--quiet", "--host", "127.0.0.1", "--port", "0", "--teacher-key-file", keyfile]
                       + sum((["--peer", f"127.0.0.1:{p}"] for p in stand.ports()), []) + ["--peer", f"127.0.0.1:{rport}"],
                       env=env, name="web")
        _, line, _ = web.wait_line(r"^serving https on tcp port \d+")
        port = int(line.rsplit(" ", 1)[1])
        time.sleep(1)
        b0, t0 = cpu_seconds(web.p.pid), time.monotonic()
        time.sleep(SECONDS / 2)
        idle = (cpu_seconds(web.p.pid) - b0) / (time.monotonic() - t0) * 100
        browser = wbt.Proc([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--ignore-certificate-errors",
                            f"--user-data-dir={tmp}/chromium", "--remote-debugging-port=0", "--no-first-run", "about:blank"],
                           name="chromium")
        _, line, _ = browser.wait_line(r"DevTools listening on ws://", which="err", timeout=30)
        devtools_port = int(re.search(r"ws://[^:]+:(\d+)/", line).group(1))
        chrome = DevTools(re.search(r"(ws://\S+)", line).group(1))
        target = chrome.call("Target.createTarget", url=f"https://127.0.0.1:{port}/teacher", newWindow=True)["targetId"]
        page = DevTools(f"ws://127.0.0.1:{devtools_port}/devtools/page/{target}")
        page.wait_for("!!document.getElementById('key')", what="the login form")
        page.evaluate(f"document.getElementById('key').value = {KEY!r}; document.querySelector('form').submit()")
        try:
            page.wait_for(f"document.querySelectorAll('.row[data-state=driving]').length === {ROBOTS + 1}", timeout=15,
                          what="every robot's row driving")
        except AssertionError:
            print(page.evaluate("[...document.querySelectorAll('.row')].map(r => r.dataset.robot + '=' + r.dataset.state).join(' ')"))
            print(page.evaluate("location.href"), stand.sent)
            raise
        time.sleep(2)
        pushes0 = page.evaluate("window.dashboardUpdates || 0")
        sent0, w0, r0, t0 = stand.sent, cpu_seconds(web.p.pid), cpu_seconds(receiver.p.pid), time.monotonic()
        time.sleep(SECONDS)
        elapsed = time.monotonic() - t0
        pushes = (page.evaluate("window.dashboardUpdates || 0") - pushes0) / elapsed
        web_cpu = (cpu_seconds(web.p.pid) - w0) / elapsed * 100
        watched = (cpu_seconds(receiver.p.pid) - r0) / elapsed * 100
        rate = (stand.sent - sent0) / elapsed
        print(f"web server: {idle:.2f} % of a core with no dashboard open")
        print(f"web server: {web_cpu:.2f} % of a core with {ROBOTS + 1} watched robots ({rate:.0f} reports/s in) and one dashboard open "
              f"({pushes:.1f} pushes/s to it), "
              f"{elapsed:.0f} s (goal < 5 % with a release build; this binary: {BINARY})")
        print(f"receiver driven at 50 Hz: {unwatched:.2f} % of a core unwatched, {watched:.2f} % watched")
        print(f"teacher-bench: web {web_cpu:.2f} % of a core for {ROBOTS + 1} robots; receiver {unwatched:.2f} % → {watched:.2f} % when watched", flush=True)
        return 0
    finally:
        if stand:
            stand.stop = True
        for p in reversed(wbt.PROCS):
            p.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
