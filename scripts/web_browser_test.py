#!/usr/bin/env python3
"""End-to-end test of the phone page (`analog-remote web`) in a real headless Chromium.

Two simulated boards (`board-sim --trace`), two receivers on loopback (`receive --no-advertise
--port 0`), one `web` server over HTTPS with a fresh self-signed certificate, and Chromium driven
over the DevTools protocol: pages pick robots (listed as typed: `web` has no teacher key here, so
no unsigned answer names them), get a device orientation
(`DeviceOrientation.setDeviceOrientationOverride`), press buttons with touch
events, and the test checks the exact `W` commands each board took. The drive screen is laid out
at five phone viewports (portrait and landscape): every drive button and Stop must be inside the
visible viewport and be what `elementFromPoint` finds at its centre. A zero set in portrait must
not bias landscape. A robot another page drives is refused on the picker. Then a page is frozen
(`Page.setWebLifecycleState`) and its board must get motors 0 within 100 ms, by the arrival time
of that write; then pages are closed. Then misbehaving clients (raw WebSockets): a foreign or
missing Origin (403), malformed JSON, binary, oversized frames, a flood, a taken name, 200 pages
at once from several addresses, one address past its share of the pages; the server must answer
each with a clear error, stay up, keep its memory bounded, and the phone still driving must not
notice. No page of ours may log a console error in the whole run.

Usage: web_browser_test.py BINARY [--screenshot PATH] [--screenshots DIR]. `--screenshots` writes
phone-320x454.png and phone-landscape-568x320.png there. Prints `web-browser: N passed, M failed`
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
from webtest_ws import Closed, DevTools, Refused, WebSocket  # noqa: E402

BINARY = os.path.abspath(sys.argv[1])
SCREENSHOT = sys.argv[sys.argv.index("--screenshot") + 1] if "--screenshot" in sys.argv else None
SHOTS = sys.argv[sys.argv.index("--screenshots") + 1] if "--screenshots" in sys.argv else None
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


# The viewports a phone's browser leaves the page (browser bars shown): name, width, height, angle.
VIEWPORTS = [("small portrait", 320, 454, 0), ("portrait", 375, 548, 0), ("tall portrait", 390, 844, 0),
             ("small landscape", 568, 320, 90), ("landscape", 844, 390, 270)]
CONTROLS = ["#fwd", "#back", "#a", "#b", "#stop", "#zero"]

# Where each control is and whether it is the element found at its own centre.
LAYOUT_JS = """(() => {
  const out = {w: innerWidth, h: innerHeight, scrollH: document.scrollingElement.scrollHeight, scrollW: document.scrollingElement.scrollWidth};
  for (const sel of %s) {
    const el = document.querySelector(sel), r = el.getBoundingClientRect();
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    const hit = document.elementFromPoint(x, y);
    out[sel] = {l: r.left, t: r.top, r: r.right, b: r.bottom, hit: !!hit && (hit === el || el.contains(hit))};
  }
  return out;
})()""" % json.dumps(CONTROLS)


COUNTERS_JS = """(() => {
  window.__buzzes = 0; window.__wakeLocks = 0;
  const vibrate = navigator.vibrate ? navigator.vibrate.bind(navigator) : () => false;
  navigator.vibrate = (p) => { window.__buzzes++; return vibrate(p); };
  if (navigator.wakeLock) {
    const request = navigator.wakeLock.request.bind(navigator.wakeLock);
    navigator.wakeLock.request = (t) => { window.__wakeLocks++; return request(t); };
  }
})()"""


def layout_problems(m, angle):
    """What a student could not reach in the measured layout `m` (empty: all fine)."""
    bad = []
    for sel in CONTROLS:
        r = m[sel]
        if r["l"] < 0 or r["t"] < 0 or r["r"] > m["w"] + 0.5 or r["b"] > m["h"] + 0.5 or r["r"] - r["l"] < 30 or r["b"] - r["t"] < 30:
            bad.append(f"{sel} at {r['l']:.0f},{r['t']:.0f}-{r['r']:.0f},{r['b']:.0f} is not inside {m['w']}x{m['h']}")
        elif not r["hit"]:
            bad.append(f"{sel}: elementFromPoint at its centre finds another element")
    if m["scrollH"] > m["h"] + 0.5 or m["scrollW"] > m["w"] + 0.5:
        bad.append(f"the page overflows: {m['scrollW']}x{m['scrollH']} in {m['w']}x{m['h']}")
    mid = lambda r: ((r["l"] + r["r"]) / 2, (r["t"] + r["b"]) / 2)  # noqa: E731
    if angle:
        # Two thumbs: Forward/Back on the left half, A/B on the right; Stop in neither thumb's
        # resting corner (bottom third, outer quarter of either side).
        for sel in ("#fwd", "#back"):
            if mid(m[sel])[0] >= m["w"] / 2:
                bad.append(f"{sel} is not under the left thumb")
        for sel in ("#a", "#b"):
            if mid(m[sel])[0] <= m["w"] / 2:
                bad.append(f"{sel} is not under the right thumb")
        s = m["#stop"]
        if s["b"] > m["h"] * 2 / 3 and (s["l"] < m["w"] / 4 or s["r"] > m["w"] * 3 / 4):
            bad.append("Stop lies where a thumb rests")
    else:
        if m["#stop"]["b"] > m["h"] * 2 / 3:
            bad.append("Stop lies in the bottom third, where the thumbs work")
    return bad


def answer_pings(sockets):
    """Reads what is waiting on each socket (answering the server's pings; messages are dropped)."""
    import select
    for w in sockets:
        try:
            while w.buffer or w.sock.pending() or select.select([w.sock], [], [], 0)[0]:
                w.recv(timeout=0.05)
        except (OSError, Closed):
            pass


def console_errors(page):
    """Console errors and uncaught exceptions the page reported (DevTools events seen so far)."""
    out = []
    for e in page.events:
        p = e.get("params", {})
        if e.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append(p["entry"].get("text", "") + " " + p["entry"].get("url", ""))
        elif e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif e.get("method") == "Runtime.exceptionThrown":
            out.append(p.get("exceptionDetails", {}).get("text", "") + " " +
                       str(p.get("exceptionDetails", {}).get("exception", {}).get("description", "")))
    return out


def sent_states(page):
    """The state messages the page sent on its WebSocket, oldest first."""
    out = []
    for e in page.events:
        if e.get("method") == "Network.webSocketFrameSent":
            try:
                m = json.loads(e["params"]["response"]["payloadData"])
            except (KeyError, ValueError):
                continue
            if m.get("t") == "s":
                out.append(m)
    return out


def main():
    tmp = tempfile.mkdtemp(prefix="ar-web-test-")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    foreign = None
    try:
        boards = [Board(tmp, 1), Board(tmp, 2)]
        paired = Proc([BINARY, "receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim", "--name", "robot 3",
                       "--accept", "paired", "--pairing-code", "4711"], name="paired receiver")
        _, line, _ = paired.wait_line(r"^receiving on udp port \d+")
        paired_port = int(line.rsplit(" ", 1)[1])
        env = dict(os.environ, XDG_STATE_HOME=f"{tmp}/state")
        web = Proc([BINARY, "web", "--quiet", "--host", "127.0.0.1", "--port", "0", "--max-drivers", "60",
                    "--allow-origin", "https://school.example",
                    "--peer", f"127.0.0.1:{boards[0].port}", "--peer", f"127.0.0.1:{boards[1].port}",
                    "--peer", f"127.0.0.1:{paired_port}"], env=env, name="web")
        _, line, _ = web.wait_line(r"^serving https on tcp port \d+")
        port = int(line.rsplit(" ", 1)[1])
        _, fp, _ = web.wait_line(r"^certificate sha256 ")
        check("a self-signed certificate is made in the state directory on first start",
              os.path.exists(f"{tmp}/state/analog-remote/web-cert.pem")
              and oct(os.stat(f"{tmp}/state/analog-remote/web-key.pem").st_mode & 0o777) == "0o600"
              and re.fullmatch(r"certificate sha256 ([0-9A-F]{2}:){31}[0-9A-F]{2}", fp) is not None, fp)
        urls = [l for _, l in web.lines() if l.startswith("url ")]
        check("`web --host 127.0.0.1` prints a url only for the address it listens on",
              urls == [f"url https://127.0.0.1:{port}/"], urls)
        url = f"https://127.0.0.1:{port}/"
        origin = f"https://127.0.0.1:{port}"

        browser = Proc([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--ignore-certificate-errors",
                        f"--user-data-dir={tmp}/chromium", "--remote-debugging-port=0", "--no-first-run",
                        "--window-size=412,915", "about:blank"], name="chromium")
        _, line, _ = browser.wait_line(r"DevTools listening on ws://", which="err", timeout=30)
        browser_url = re.search(r"(ws://\S+)", line).group(1)
        devtools_port = int(re.search(r"ws://[^:]+:(\d+)/", line).group(1))
        chrome = DevTools(browser_url)

        def attach(target_url, touch=True):
            # Each page in a window of its own: a background tab would be hidden (and stop driving).
            target = chrome.call("Target.createTarget", url="about:blank", newWindow=True)["targetId"]
            page = DevTools(f"ws://127.0.0.1:{devtools_port}/devtools/page/{target}")
            page.target = target
            for domain in ("Page", "Runtime", "Log", "Network"):
                page.call(f"{domain}.enable")
            # Count the page's haptic buzzes and wake-lock requests (both still reach the browser).
            page.call("Page.addScriptToEvaluateOnNewDocument", source=COUNTERS_JS)
            if touch:
                page.call("Emulation.setDeviceMetricsOverride", width=412, height=915, deviceScaleFactor=2, mobile=True)
                page.call("Emulation.setTouchEmulationEnabled", enabled=True, maxTouchPoints=5)
            page.call("Page.navigate", url=target_url)
            return page

        def open_page(touch=True):
            page = attach(url, touch)
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

        def viewport(page, width, height, angle):
            kind = "portraitPrimary" if angle == 0 else "landscapePrimary" if angle == 90 else "landscapeSecondary"
            page.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=2, mobile=True,
                      screenOrientation={"type": kind, "angle": angle})
            # Two animation frames: the page has laid itself out for the new size.
            page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")

        def driving(page):
            page.wait_for("['DRIVING', 'driving'].includes(document.getElementById('state').textContent)",
                          what="the receiver's accept")

        a, b = open_page(), open_page()
        check("the page is a secure context (HTTPS), so the tilt sensor is offered", a.evaluate("window.isSecureContext") is True)
        # No teacher key: nothing a receiver says unsigned names it on the page (its query reply,
        # its accept), so each robot is listed as typed (Protocol.md §8.5).
        want_names = [f"127.0.0.1:{p}" for p in (boards[0].port, boards[1].port, paired_port)]
        picker_js = "[...document.querySelectorAll('.robot')].map(b => b.firstChild.textContent)"
        try:
            a.wait_for(f"JSON.stringify({picker_js}) === {json.dumps(json.dumps(want_names))}", what="the robots listed as typed")
        except AssertionError:
            pass
        names = a.evaluate(picker_js)
        details = a.evaluate("[...document.querySelectorAll('.robot small')].map(s => s.textContent)")
        check("without a teacher key the picker lists each robot as typed (no unsigned answer renames it), its address as a detail",
              names == want_names and all(f"127.0.0.1:{p}" in d for p, d in zip([boards[0].port, boards[1].port, paired_port], details)),
              (names, details))
        hints = a.evaluate("!document.getElementById('keys').hidden && getComputedStyle(document.getElementById('keys')).display !== 'none'")
        check("a touch phone is shown no keyboard hints", hints is False, hints)

        # Page A: Ann drives robot 1; the drive screen calls it what the picker did.
        type_name(a, "Ann")
        tap(a, ".robot[data-id=p1]")
        a.wait_for("!document.getElementById('drive').hidden", what="page A's drive panel")
        driving(a)
        shown = a.evaluate("document.getElementById('robotname').textContent")
        check("the drive screen names the robot as the picker does (its accept renames nothing)", shown == want_names[0], shown)

        # Page B first claims the taken name: a clear error, nothing driven.
        type_name(b, "ann")
        tap(b, ".robot[data-id=p2]")
        text = b.wait_for("(() => { const e = document.getElementById('error'); return !e.hidden && e.textContent; })()",
                          what="page B's error")
        check("a name already taken is refused with a clear error", "taken" in text and "pick another" in text, text)
        type_name(b, "Ben")
        tap(b, ".robot[data-id=p2]")
        driving(b)

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
        buzz = a.evaluate("window.__buzzes || 0")

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
        touch(a)

        # Rotation: zero in portrait with the phone held at 3°, turn it, hold it level.
        tilt(a, 3)
        a.wait_for("document.getElementById('tiltvalue').textContent === '+3°'", what="the 3° tilt")
        tap(a, "#zero")
        a.wait_for("document.getElementById('tiltvalue').textContent === '+0°'", what="the zero")
        a.evaluate("new Promise(r => setTimeout(() => r(true), 150))")
        a.pump(0.1)
        portrait = sent_states(a)[-1]["a"] if sent_states(a) else None
        viewport(a, 844, 390, 90)
        tilt(a, 0, 0)
        a.wait_for("document.getElementById('tiltsource').textContent.includes('phone')", what="the tilt")
        a.evaluate("new Promise(r => setTimeout(() => r(true), 150))")  # three heartbeats
        a.pump(0.1)
        after = sent_states(a)[-1]["a"] if sent_states(a) else None
        check(f"zeroed in portrait at 3°, turned to landscape, held level: the page sends angle {after} (want 0)",
              portrait == 0 and after == 0, (portrait, after))
        tilt(a, 0, 0)
        # The zero taken in portrait is still there when the phone is turned back.
        viewport(a, 412, 915, 0)
        tilt(a, 3)
        a.evaluate("new Promise(r => setTimeout(() => r(true), 150))")
        a.pump(0.1)
        back = sent_states(a)[-1]["a"] if sent_states(a) else None
        check("turned back to portrait at 3°, the portrait zero still holds (angle 0)", back == 0, back)
        tilt(a, 20)

        # Every viewport: each drive control and Stop on screen and hit-testable; two thumbs in landscape.
        for label, w, h, angle in VIEWPORTS:
            viewport(a, w, h, angle)
            m = a.evaluate(LAYOUT_JS)
            bad = layout_problems(m, angle)
            check(f"{label} {w}×{h}: Forward, Back, A, B, zero and Stop are on screen and reachable", not bad, bad)
            if SHOTS and (w, h) in ((320, 454), (568, 320)):
                time.sleep(0.3)
                shot = a.call("Page.captureScreenshot", format="png")
                import base64
                name = "phone-320x454.png" if angle == 0 else "phone-landscape-568x320.png"
                with open(os.path.join(SHOTS, name), "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
        viewport(a, 412, 915, 0)

        # A page on a laptop (no touch) is told its keys.
        lap = open_page(touch=False)
        hints = lap.evaluate("getComputedStyle(document.getElementById('keys')).display !== 'none' && !document.getElementById('keys').hidden")
        check("a page without touch (a laptop) shows the keyboard hints", hints is True, hints)

        # A robot another page drives: the picker says so, and picking it explains, stays on the picker.
        cat = lap
        try:
            cat.wait_for("[...document.querySelectorAll('.robot small')].some(s => s.textContent.includes('driven by Ann'))",
                       what="'driven by Ann' on the picker")
            type_name(cat, "Cat")
            cat.evaluate("document.querySelector('.robot[data-id=p1]').click()")
            text = cat.wait_for("(() => { const e = document.getElementById('error');"
                                " return !e.hidden && e.textContent.includes('driven by') && e.textContent; })()",
                                what="page C's explanation")
            on_picker = cat.evaluate("document.getElementById('drive').hidden && !document.getElementById('join').hidden")
            check("picking a robot Ann drives explains it and stays on the picker", "driven by Ann" in text and on_picker, (text, on_picker))
            # Cat drives the paired robot with its code, then taps Stop: the socket closes cleanly.
            cat.evaluate("document.getElementById('code').value = '4711'")
            cat.evaluate("document.querySelector('.robot[data-id=p3]').click()")
            driving(cat)
            cat.evaluate("document.getElementById('stop').click()")
            cat.wait_for("!document.getElementById('join').hidden", what="the picker after Stop")
            cat.pump(0.5)
        except AssertionError as e:
            check("a robot another page drives is explained on the picker", False, str(e))

        # Haptics: a button that engages asks the phone to buzz, where the browser can.
        check("a drive button that engages vibrates (navigator.vibrate) where the browser has it", buzz > 0, buzz)

        # Hide page A: neutral on board 1 within 100 ms, by the arrival of that write.
        n = len(boards[0].writes())
        b_motors = boards[1].motor_writes()
        a.pump(0.05)
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
        a.call("Page.setWebLifecycleState", state="active")
        # Headless Chromium leaves a page it unfroze "hidden"; a phone shows it again: say so, as
        # the browser would (the state, then the event).
        a.evaluate("Object.defineProperty(document, 'visibilityState', {get: () => 'visible', configurable: true}),"
                   " document.dispatchEvent(new Event('visibilitychange')), true")
        a.pump(0.3)
        lock = a.evaluate("document.getElementById('resume').click(), new Promise(r => setTimeout(() => r(window.__wakeLocks || 0), 1500))")
        check("driving again after the page was hidden takes the screen wake lock again", lock >= 2, lock)
        a.evaluate("document.getElementById('stop').click()")
        a.wait_for("!document.getElementById('join').hidden", what="page A's picker after Stop")

        # Misbehaving clients, while page B keeps driving robot 2.
        wss = f"wss://127.0.0.1:{port}/ws"

        def refused(origin_header, what):
            try:
                WebSocket(wss, origin=origin_header).close()
                return check(what, False, "the upgrade was accepted")
            except Refused as r:
                return check(what, " 403 " in r.status + " ", r.status)
        refused("https://evil.example", "a WebSocket from a foreign Origin is refused with 403")
        refused(None, "a WebSocket without an Origin is refused with 403")
        refused(f"http://127.0.0.1:{port}", "a WebSocket from the same host but another scheme is refused with 403")
        try:
            ok = WebSocket(wss, origin="https://school.example")
            m = json.loads(ok.recv(timeout=5))
            ok.close()
            check("an Origin given with --allow-origin is served", m.get("t") == "robots", m)
        except (Refused, OSError, Closed) as e:
            check("an Origin given with --allow-origin is served", False, repr(e))

        # A real page on another site (another port of this host) tries the same from the browser.
        import http.server
        class Evil(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = (f"<!doctype html><title>evil</title><script>const w = new WebSocket('{wss}');"
                        "w.onopen = () => { document.title = 'open'; w.send(JSON.stringify({t: 'join', robot: 'p3', name: 'Mallory'})); };"
                        "w.onclose = () => { if (document.title !== 'open') document.title = 'refused'; };</script>").encode()
                self.send_response(200 if self.path == "/" else 404)
                self.send_header("Content-Type", "text/html")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass
        foreign = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)
        threading.Thread(target=foreign.serve_forever, daemon=True).start()
        evil = attach(f"http://127.0.0.1:{foreign.server_address[1]}/", touch=False)
        title = evil.wait_for("['open', 'refused'].includes(document.title) && document.title", what="the foreign page's WebSocket")
        check("a page of another site, opened in the browser, cannot open the server's WebSocket", title == "refused", title)
        chrome.call("Target.closeTarget", targetId=evil.target)

        bad = WebSocket(wss, origin=origin)
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
        bad.send_json({"t": "stopAll"})
        e5 = next_error(bad)
        check("a page cannot ask for a teacher's action (stop-all): unknown message type", "unknown message type" in e5, e5)
        # The pairing code typed on the page goes into that phone's hello.
        def join_paired(code, name):
            ws = WebSocket(wss, origin=origin)
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

        flood = WebSocket(wss, origin=origin)
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

        # 200 pages at once, 25 from each of 8 addresses (127.0.0.0/8 is all loopback).
        many = []
        try:
            lists = 0
            for i in range(200):
                many.append(WebSocket(wss, timeout=20, origin=origin, source=f"127.0.0.{2 + i % 8}"))
                lists += json.loads(many[-1].recv(timeout=20)).get("t") == "robots"
                if i % 10 == 9:
                    answer_pings(many)  # the server drops a socket that leaves its ping unanswered for 10 s
            for i, w in enumerate(many[:80]):
                w.send_json({"t": "join", "robot": "p1", "name": f"kid{i}"})
            # Every joining page is read as its messages come (robot lists, one per join anywhere,
            # come first), so none leaves the server's ping unanswered, until each has its answer.
            import select
            full, outcome = 0, {}
            waiting = {w.sock: w for w in many[:80]}
            deadline = time.monotonic() + 30
            while waiting and time.monotonic() < deadline:
                ready = [k for k, w in waiting.items() if w.buffer or k.pending()] or select.select(list(waiting), [], [], 0.5)[0]
                for k in ready:
                    w = waiting[k]
                    try:
                        m = json.loads(w.recv(timeout=5))
                    except (Closed, OSError) as e:
                        outcome[repr(e)[:40]] = outcome.get(repr(e)[:40], 0) + 1
                        del waiting[k]
                        continue
                    if m.get("t") in ("joined", "error"):
                        key = m["t"] if m["t"] == "joined" else m["text"]
                        outcome[key] = outcome.get(key, 0) + 1
                        full += m["t"] == "error" and "drives 60 robots" in m["text"]
                        del waiting[k]
                answer_pings(many[80:])
            check(f"200 pages at once from 8 addresses: all get the robot list ({lists}), drivers beyond --max-drivers are told so ({full} of 80 joins)",
                  lists == 200 and full >= 80 - 60, (lists, full, outcome, len(waiting)))
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

        # One address takes at most its share of --max-pages (256 / 8 = 32); others still get in.
        mine = []
        try:
            for i in range(32):
                w = WebSocket(wss, timeout=20, origin=origin, source="127.0.0.20")
                mine.append(w)
                json.loads(w.recv(timeout=10))
            extra = WebSocket(wss, timeout=20, origin=origin, source="127.0.0.20")
            mine.append(extra)
            said, code = None, None
            try:
                while True:
                    m = json.loads(extra.recv(timeout=10))
                    if m.get("t") == "error":
                        said = m["text"]
            except Closed as c:
                code = c.code
            other = WebSocket(wss, timeout=20, origin=origin, source="127.0.0.21")
            mine.append(other)
            m = json.loads(other.recv(timeout=10))
            check("one address past its share of the pages (32) is told so and closed (1013); another address still gets in",
                  said is not None and "from your address" in said and code == 1013 and m.get("t") == "robots", (said, code, m))
        except (OSError, Closed) as e:
            check("per-address page limit", False, repr(e))
        finally:
            for w in mine:
                w.close()

        # Page B still drives: a new tilt reaches board 2.
        n = len(boards[1].writes())
        tilt(b, 30)
        want = f"W 22 {motor_bytes(page_angle(30), 2)}"
        try:
            boards[1].wait_write(want, after=n)
            check("after all that, page B still drives robot 2 (a new tilt arrives exactly)", web.p.poll() is None)
        except AssertionError as e:
            check("page B still drives", False, str(e))

        # Console errors of our pages over the whole run (flush what is in flight first).
        for page in (a, b, cat):
            page.evaluate("1")
            page.pump(0.2)
        errors = {name: console_errors(page) for name, page in (("A", a), ("B", b), ("C", cat))}
        check("no console error on any page in the whole run (no favicon 404, no data after a Close frame)",
              not any(errors.values()), errors)

        # Close page B's tab: board 2 neutral.
        n = len(boards[1].writes())
        chrome.call("Target.closeTarget", targetId=b.target)
        try:
            boards[1].wait_write("W 22 0000", after=n, timeout=3)
            check("closing page B's tab: board 2 gets motors 0", True)
        except AssertionError as e:
            check("closing page B's tab", False, str(e))
        chrome.call("Target.closeTarget", targetId=a.target)
        chrome.call("Target.closeTarget", targetId=cat.target)

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
        if foreign:
            foreign.shutdown()
        for p in reversed(PROCS):
            p.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"web-browser: {len(PASSED)} passed, {len(FAILED)} failed", flush=True)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
