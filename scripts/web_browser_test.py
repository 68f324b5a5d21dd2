#!/usr/bin/env python3
"""End-to-end test of the phone page (`analog-remote web`) in a real headless Chromium.

Two simulated boards (`board-sim --trace`), two receivers on loopback (`receive --no-advertise
--port 0`), one `web` server over HTTPS with a fresh self-signed certificate, and Chromium driven
over the DevTools protocol: pages pick robots, get a device orientation
(`DeviceOrientation.setDeviceOrientationOverride`), press buttons with touch events, and the test
checks the exact `W` commands each board took. Then a page is frozen (`Page.setWebLifecycleState`)
and its board must get motors 0 within 100 ms, by the arrival time of that write; then pages are
closed. Then misbehaving clients (raw WebSockets): malformed JSON, binary, oversized frames, a
flood, a taken name, 200 pages at once; the server must answer each with a clear error, stay up,
keep its memory bounded, and the phone still driving must not notice.

Usage: web_browser_test.py BINARY [--screenshot PATH]. Prints `web-browser: N passed, M failed`
last. Every process it starts is stopped on every way out.
"""
import json
import math
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from webtest_ws import Closed, DevTools, WebSocket  # noqa: E402

BINARY = os.path.abspath(sys.argv[1])
SCREENSHOT = sys.argv[sys.argv.index("--screenshot") + 1] if "--screenshot" in sys.argv else None
PROCS = []
PASSED, FAILED = [], []


class Proc:
    """A child process whose stdout and stderr lines are collected with their arrival times."""

    def __init__(self, args, env=None, name=None):
        self.name = name or os.path.basename(args[0])
        self.p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env, start_new_session=True)
        self.out, self.err = [], []
        self.lock = threading.Lock()
        PROCS.append(self)
        self.pumps = [threading.Thread(target=self._pump, args=(stream, sink), daemon=True)
                      for stream, sink in ((self.p.stdout, self.out), (self.p.stderr, self.err))]
        for pump in self.pumps:
            pump.start()

    def _pump(self, stream, sink):
        for raw in iter(stream.readline, b""):
            with self.lock:
                sink.append((time.monotonic(), raw.decode(errors="replace").rstrip("\n")))

    def lines(self, which="out"):
        with self.lock:
            return list(self.out if which == "out" else self.err)

    def wait_line(self, pattern, which="out", timeout=20.0, after=0):
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while time.monotonic() < deadline:
            for i, (t, line) in enumerate(self.lines(which)):
                if i >= after and rx.search(line):
                    return t, line, i
            if self.p.poll() is not None and time.monotonic() > deadline - timeout + 0.5:
                break
            time.sleep(0.01)
        raise AssertionError(f"{self.name}: no line matching {pattern!r} on std{which}; "
                             f"stdout tail {[l for _, l in self.lines('out')[-5:]]} stderr tail {[l for _, l in self.lines('err')[-8:]]}")

    def stop(self, sig=signal.SIGTERM, timeout=5.0):
        if self.p.poll() is None:
            try:
                self.p.send_signal(sig)
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(5)
        # The process is gone, but its last lines (the receiver's summary) may still be in the
        # pipes: let the readers reach end of file before anyone reads the lines.
        for pump in self.pumps:
            pump.join(timeout=5)
        return self.p.returncode


def check(name, ok, detail=""):
    (PASSED if ok else FAILED).append(name)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"), flush=True)
    return ok


# MARK: the robot's side: Protocol.md §3.4 with the kit profile, in binary32 like the receiver

def f32(x):
    return struct.unpack(">f", struct.pack(">f", x))[0]


def round_away(x):
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def motor_bytes(angle, buttons):
    a, full, dead, speed = f32(angle), f32(0.7853982), f32(0.05), 64
    m = abs(a)
    s0 = 0.0 if m <= dead else min(1.0, (m - dead) / (full - dead))
    s = math.copysign(s0, a) if s0 else 0.0
    fwd, back = bool(buttons & 1), bool(buttons & 2)
    t = 1 if fwd and not back else -1 if back and not fwd else 0
    clamp = lambda v: max(-127, min(127, v))  # noqa: E731
    left, right = clamp(round_away(speed * (t + s))), clamp(round_away(speed * (t - s)))
    left = -left  # the kit's left motor is mounted mirrored
    return f"{left & 0xff:02x}{right & 0xff:02x}"


def page_angle(degrees):
    """What the page sends for a roll of `degrees`: radians rounded to 4 decimals."""
    return round(math.radians(degrees) * 10000) / 10000


class Board:
    def __init__(self, tmp, n):
        self.sim = Proc([BINARY, "board-sim", "--quiet", "--trace", "--firmware", "motors", "--link", f"{tmp}/board{n}"], name=f"board-sim {n}")
        _, self.path, _ = self.sim.wait_line(r"^/")
        self.receiver = Proc([BINARY, "receive", "--quiet", "--no-advertise", "--port", "0", "--board", f"serial:{self.path}",
                              "--name", f"robot {n}"], name=f"receiver {n}")
        _, line, _ = self.receiver.wait_line(r"^receiving on udp port \d+")
        self.port = int(line.rsplit(" ", 1)[1])

    def writes(self):
        """The board's `W` commands, with arrival times."""
        return [(t, l[4:]) for t, l in self.sim.lines() if l.startswith("cmd W ")]

    def motor_writes(self):
        return [(t, w) for t, w in self.writes() if w.startswith("W 22 ")]

    def wait_write(self, expected, timeout=5.0, after=0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for i, (t, w) in enumerate(self.writes()):
                if i >= after and w == expected:
                    return t, i
            time.sleep(0.005)
        raise AssertionError(f"board never took {expected!r}; its writes: {[w for _, w in self.writes()[-12:]]}")


def main():
    tmp = tempfile.mkdtemp(prefix="ar-web-test-")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        boards = [Board(tmp, 1), Board(tmp, 2)]
        paired = Proc([BINARY, "receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim", "--name", "robot 3",
                       "--accept", "paired", "--pairing-code", "4711"], name="paired receiver")
        _, line, _ = paired.wait_line(r"^receiving on udp port \d+")
        paired_port = int(line.rsplit(" ", 1)[1])
        env = dict(os.environ, XDG_STATE_HOME=f"{tmp}/state")
        web = Proc([BINARY, "web", "--quiet", "--host", "127.0.0.1", "--port", "0", "--max-drivers", "60",
                    "--peer", f"127.0.0.1:{boards[0].port}", "--peer", f"127.0.0.1:{boards[1].port}",
                    "--peer", f"127.0.0.1:{paired_port}"], env=env, name="web")
        _, line, _ = web.wait_line(r"^serving https on tcp port \d+")
        port = int(line.rsplit(" ", 1)[1])
        _, fp, _ = web.wait_line(r"^certificate sha256 ")
        check("a self-signed certificate is made in the state directory on first start",
              os.path.exists(f"{tmp}/state/analog-remote/web-cert.pem")
              and oct(os.stat(f"{tmp}/state/analog-remote/web-key.pem").st_mode & 0o777) == "0o600"
              and re.fullmatch(r"certificate sha256 ([0-9A-F]{2}:){31}[0-9A-F]{2}", fp) is not None, fp)
        url = f"https://127.0.0.1:{port}/"

        browser = Proc([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--ignore-certificate-errors",
                        f"--user-data-dir={tmp}/chromium", "--remote-debugging-port=0", "--no-first-run",
                        "--window-size=412,915", "about:blank"], name="chromium")
        _, line, _ = browser.wait_line(r"DevTools listening on ws://", which="err", timeout=30)
        browser_url = re.search(r"(ws://\S+)", line).group(1)
        devtools_port = int(re.search(r"ws://[^:]+:(\d+)/", line).group(1))
        chrome = DevTools(browser_url)

        def open_page():
            # Each page in a window of its own: a background tab would be hidden (and stop driving).
            target = chrome.call("Target.createTarget", url=url, newWindow=True)["targetId"]
            page = DevTools(f"ws://127.0.0.1:{devtools_port}/devtools/page/{target}")
            page.target = target
            page.call("Page.enable")
            page.call("Runtime.enable")
            page.call("Emulation.setDeviceMetricsOverride", width=412, height=915, deviceScaleFactor=2, mobile=True)
            page.call("Emulation.setTouchEmulationEnabled", enabled=True, maxTouchPoints=5)
            page.wait_for("document.querySelectorAll('.robot').length === 3", what="the robot list")
            return page

        def type_name(page, name):
            page.evaluate("(() => { const i = document.getElementById('name'); i.value = ''; i.focus(); })()")
            page.call("Input.insertText", text=name)

        def tap(page, selector):
            c = page.center(selector)
            page.call("Input.dispatchTouchEvent", type="touchStart", touchPoints=[c])
            page.call("Input.dispatchTouchEvent", type="touchEnd", touchPoints=[])

        def touch(page, *selectors):
            # One finger per selector, id = its place in `selectors`; Chromium compares with the
            # previous event and fires touchstart/touchend for the fingers that came and went.
            # Lifting one finger of several: all fingers up, then the remaining ones down again.
            points = [dict(page.center(s), id=i) for i, s in enumerate(selectors)]
            before = getattr(page, "touching", [])
            if before and len(points) < len(before):
                page.call("Input.dispatchTouchEvent", type="touchEnd", touchPoints=[])
                before = []
            if points:
                page.call("Input.dispatchTouchEvent", type="touchMove" if before else "touchStart", touchPoints=points)
            page.touching = points

        def tilt(page, gamma, beta=0.0):
            page.call("DeviceOrientation.setDeviceOrientationOverride", alpha=0, beta=beta, gamma=gamma)

        a, b = open_page(), open_page()
        check("the page is a secure context (HTTPS), so the tilt sensor is offered", a.evaluate("window.isSecureContext") is True)
        names = a.evaluate("[...document.querySelectorAll('.robot')].map(b => b.firstChild.textContent)")
        check("the picker lists the robots by name",
              names == [f"127.0.0.1:{boards[0].port}", f"127.0.0.1:{boards[1].port}", f"127.0.0.1:{paired_port}"], names)

        # Page A: Ann drives robot 1.
        type_name(a, "Ann")
        tap(a, ".robot[data-id=p1]")
        a.wait_for("!document.getElementById('drive').hidden", what="page A's drive panel")
        a.wait_for("document.getElementById('state').textContent === 'DRIVING' || document.getElementById('state').textContent === 'driving'", what="page A accepted (hello answered)")
        check("page A: the receiver accepted its hello", True)

        # Page B first claims the taken name: a clear error, nothing driven.
        type_name(b, "ann")
        tap(b, ".robot[data-id=p2]")
        text = b.wait_for("(() => { const e = document.getElementById('error'); return !e.hidden && e.textContent; })()",
                          what="page B's error")
        check("a name already taken is refused with a clear error", "taken" in text and "pick another" in text, text)
        type_name(b, "Ben")
        tap(b, ".robot[data-id=p2]")
        b.wait_for("document.getElementById('state').textContent === 'DRIVING' || document.getElementById('state').textContent === 'driving'", what="page B accepted")

        # Tilt + forward on A; tilt + backward + B on B. Exact W writes on each board.
        tilt(a, 20)
        touch(a, "#fwd")
        want_a = f"W 22 {motor_bytes(page_angle(20), 1)}"
        tilt(b, -10)
        touch(b, "#back", "#b")
        want_b = f"W 22 {motor_bytes(page_angle(-10), 2)}"
        try:
            boards[0].wait_write(want_a)
            boards[1].wait_write(want_b)
            boards[1].wait_write("W 10 ff")
            check(f"tilt 20° + forward on page A is exactly {want_a!r} on board 1; page B's back + B is {want_b!r} + 'W 10 ff' on board 2", True)
        except AssertionError as e:
            check("tilt + buttons give the exact W writes", False, str(e))
        crosstalk = [w for _, w in boards[0].writes() if w in (want_b, "W 10 ff")] + [w for _, w in boards[1].writes() if w == want_a]
        check("two pages driving two robots: no crosstalk", not crosstalk, crosstalk)

        # Multi-touch: hold forward, press A as well.
        n = len(boards[0].writes())
        touch(a, "#fwd", "#a")
        try:
            boards[0].wait_write("W 0f ff", after=n)
            check("multi-touch: forward held while A is pressed gives 'W 0f ff' and keeps driving",
                  boards[0].motor_writes()[-1][1] == want_a)
        except AssertionError as e:
            check("multi-touch A", False, str(e))
        touch(a, "#fwd")
        _, i = boards[0].wait_write("W 0f 00", after=n)
        boards[0].wait_write(want_a, after=i)  # lifting A lifted every finger for a moment

        if SCREENSHOT:
            time.sleep(0.3)  # let the rtt figure arrive for the picture (not part of any check)
            shot = a.call("Page.captureScreenshot", format="png")
            import base64
            with open(SCREENSHOT, "wb") as f:
                f.write(base64.b64decode(shot["data"]))

        # Hide page A: neutral on board 1 within 100 ms, by the arrival of that write.
        n = len(boards[0].writes())
        b_motors = boards[1].motor_writes()
        t0 = time.monotonic()
        a.call("Page.setWebLifecycleState", state="frozen")
        try:
            t1, i = boards[0].wait_write("W 22 0000", after=n, timeout=2)
            between = [w for _, w in boards[0].writes()[n:i] if w.startswith("W 22 ")]
            check(f"page A frozen: board 1 took 'W 22 0000' {1000 * (t1 - t0):.1f} ms later (limit 100), with no other motor write first",
                  t1 - t0 < 0.1 and not between, f"{1000 * (t1 - t0):.1f} ms, before it: {between}")
        except AssertionError as e:
            check("page A frozen → neutral", False, str(e))
        hidden = a.evaluate("document.visibilityState")
        check("the frozen page is hidden", hidden == "hidden", hidden)
        check("board 2 is unaffected by page A leaving", boards[1].motor_writes() == b_motors,
              boards[1].motor_writes()[len(b_motors):])

        # Misbehaving clients, while page B keeps driving robot 2.
        wss = f"wss://127.0.0.1:{port}/ws"
        bad = WebSocket(wss)
        hello = json.loads(bad.recv(timeout=5))
        check("a raw client gets the robot list first", hello.get("t") == "robots" and len(hello["robots"]) == 3, hello)
        # The list says who drives.
        drivers = {r["id"]: r.get("driver") for r in hello["robots"]}
        check("the robot list says who drives which robot", drivers.get("p2") == "Ben", drivers)

        def next_error(ws):
            while True:
                m = json.loads(ws.recv(timeout=5))
                if m.get("t") == "error":
                    return m["text"]

        bad.send_text("{not json")
        e1 = next_error(bad)
        bad.send_json({"t": "s", "a": 0.1, "b": 1 << 20})
        e2 = next_error(bad)
        bad.send_frame(0x2, b"\x00\x01\x02")
        e3 = next_error(bad)
        bad.send_json({"t": "join", "robot": "p1", "name": "x" * 40})
        e4 = next_error(bad)
        check("malformed JSON, unknown buttons, binary frames and a long name each get one clear error",
              "JSON" in e1 and "buttons" in e2 and "binary" in e3 and "at most 32" in e4, [e1, e2, e3, e4])
        # The pairing code typed on the page goes into that phone's hello.
        def join_paired(code, name):
            ws = WebSocket(wss)
            ws.recv(timeout=5)
            ws.send_json({"t": "join", "robot": "p3", "name": name, "code": code})
            try:
                while True:
                    m = json.loads(ws.recv(timeout=10))
                    if m.get("t") == "ended" or (m.get("t") == "status" and m.get("link") == "driving"):
                        return m
            finally:
                ws.close()
        wrong = join_paired("1111", "Cy")
        right = join_paired("4711", "Di")
        check("a wrong pairing code: the page is told the receiver's reason; the right one drives",
              wrong.get("t") == "ended" and "wrong pairing code" in wrong.get("text", "") and right.get("link") == "driving",
              (wrong, right))

        bad.send_text("x" * 5000)
        try:
            while True:
                bad.recv(timeout=5)
        except Closed as c:
            check("an oversized frame closes that page's socket with 1009 (message too big)", c.code == 1009, c.code)
        except OSError as e:
            check("an oversized frame closes that page's socket with 1009", False, repr(e))

        flood = WebSocket(wss)
        flood.recv(timeout=5)
        flood.send_json({"t": "join", "robot": "p1", "name": "Flood"})
        for _ in range(3000):
            flood.send_json({"t": "s", "a": 0.0, "b": 0})
        text, code = None, None
        try:
            while True:
                m = json.loads(flood.recv(timeout=10))
                if m.get("t") == "error" and text is None:
                    text = m["text"]
        except Closed as c:
            code = c.code
        except OSError:
            pass
        check("a flooding page is told 'too many messages' and then disconnected (1008)",
              text is not None and "too many messages" in text and code == 1008, (text, code))

        many = []
        try:
            for i in range(200):
                many.append(WebSocket(wss, timeout=20))
            lists = sum(1 for w in many if json.loads(w.recv(timeout=20)).get("t") == "robots")
            for i, w in enumerate(many[:80]):
                w.send_json({"t": "join", "robot": "p1", "name": f"kid{i}"})
            full = 0
            for w in many[:80]:
                try:
                    for _ in range(20):
                        m = json.loads(w.recv(timeout=10))
                        if m.get("t") == "error" and "drives 60 robots" in m["text"]:
                            full += 1
                            break
                        if m.get("t") == "joined":
                            break
                except (Closed, OSError):
                    pass
            check(f"200 pages at once: all get the robot list ({lists}), drivers beyond --max-drivers are told so ({full} of 80 joins)",
                  lists == 200 and full >= 80 - 60, (lists, full))
        except (OSError, Closed) as e:
            check("200 pages at once", False, repr(e))
        finally:
            for w in many:
                w.close()
        rss = None
        with open(f"/proc/{web.p.pid}/status") as f:
            for l in f:
                if l.startswith("VmRSS:"):
                    rss = int(l.split()[1]) // 1024
        check(f"the server's memory stays bounded ({rss} MiB resident after 200 pages)", rss is not None and rss < 400, rss)

        # Page B still drives: a new tilt reaches board 2.
        n = len(boards[1].writes())
        tilt(b, 30)
        want = f"W 22 {motor_bytes(page_angle(30), 2)}"
        try:
            boards[1].wait_write(want, after=n)
            check("after all that, page B still drives robot 2 (a new tilt arrives exactly)", web.p.poll() is None)
        except AssertionError as e:
            check("page B still drives", False, str(e))

        # Close page B's tab: board 2 neutral.
        n = len(boards[1].writes())
        chrome.call("Target.closeTarget", targetId=b.target)
        try:
            boards[1].wait_write("W 22 0000", after=n, timeout=3)
            check("closing page B's tab: board 2 gets motors 0", True)
        except AssertionError as e:
            check("closing page B's tab", False, str(e))
        chrome.call("Target.closeTarget", targetId=a.target)

        rc = web.stop(signal.SIGINT)
        check("the server exits 0 on SIGINT", rc == 0, (rc, [l for _, l in web.lines('err')[-5:]]))
        for i, board in enumerate(boards):
            rc = board.receiver.stop(timeout=10)
            summary = next((l for _, l in board.receiver.lines() if l.startswith("summary ")), "")
            fields = dict(kv.split("=") for kv in summary.split()[1:]) if summary else {}
            trips = [l for _, l in board.receiver.lines("err") if "failsafe" in l.lower()]
            check(f"receiver {i + 1}: no failsafe trip (every stop came from the controller)", fields.get("failsafes") == "0",
                  (rc, summary, trips[:5], [l for _, l in board.receiver.lines("err")[-4:]]))
    except Exception as e:  # noqa: BLE001 — any failure is one failed check, and cleanup still runs
        import traceback
        traceback.print_exc()
        check("the test ran to its end", False, repr(e))
    finally:
        for p in reversed(PROCS):
            p.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"web-browser: {len(PASSED)} passed, {len(FAILED)} failed", flush=True)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
