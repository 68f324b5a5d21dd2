#!/usr/bin/env python3
"""The teacher's dashboard as classroom-test.sh uses it: no browser, one WebSocket client of
/teacher/ws, as a logged-in dashboard is (its being open keeps every robot watched). Each push
carries the rows that changed and, when it changed, the order of all of them; this client keeps
the whole table as the page does.

Usage: classroom_dashboard.py PORT KEYFILE OUT. Logs in with the key in KEYFILE at
https://127.0.0.1:PORT/teacher/login, opens the dashboard's socket with the session cookie, and
reads rows until SIGTERM; then writes OUT (JSON): the number of pushes and, per robot (by its
receiver's name), the last row and how many pushes left it DRIVING with a driver; `offline_since`:
per robot, the wall-clock times (time.time()) of every push that made it offline when it had not
been; `present`: the robots in the table after the last push, and `last_push` when the table was
last known current (the last push, or the last second without one: none comes while nothing
changes, and the socket is still open). SIGUSR1 writes OUT as
it is so far and goes on reading. Exits 1 with one line on stderr if it cannot log in or connect.
"""
import json
import os
import signal
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from webtest_ws import WebSocket  # noqa: E402


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def login(base, key):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE          # the server's self-signed certificate
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx), NoRedirect())
    req = urllib.request.Request(f"{base}/teacher/login", data=("key=" + urllib.parse.quote(key)).encode())
    try:
        with opener.open(req, timeout=10) as r:
            status, cookie = r.status, r.headers.get("Set-Cookie", "")
    except urllib.error.HTTPError as e:
        status, cookie = e.code, e.headers.get("Set-Cookie", "")
    if status != 303 or not cookie:
        raise SystemExit(f"classroom_dashboard: login refused (HTTP {status})")
    return cookie.split(";")[0]


def main():
    port, keyfile, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    base = f"https://127.0.0.1:{port}"
    with open(keyfile) as f:
        key = f.read().strip()
    cookie = login(base, key)
    ws = WebSocket(f"wss://127.0.0.1:{port}/teacher/ws", origin=base, cookie=cookie)
    pushes, rows, driving, offline_since, present, last_push = 0, {}, {}, {}, [], 0.0
    table, order = {}, []   # the rows by id, and the order of their ids, as the page keeps them
    stop, snapshot = [], []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGUSR1, lambda *_: snapshot.append(1))

    def write():
        with open(out + ".tmp", "w") as f:
            json.dump({"pushes": pushes, "rows": rows, "driving": driving, "offline_since": offline_since,
                       "present": present, "last_push": last_push}, f)
        os.replace(out + ".tmp", out)

    while not stop:
        if snapshot:
            snapshot.clear()
            write()
        try:
            m = json.loads(ws.recv(timeout=1))
        except TimeoutError:
            if pushes:
                last_push = time.time()   # nothing changed for a second: the table is still current
            continue
        except OSError:
            continue
        if m.get("t") != "rows":
            continue
        pushes += 1
        last_push = time.time()
        for r in m["rows"]:
            table[r["id"]] = r
        if "order" in m:
            order = m["order"]
            table = {i: table[i] for i in order if i in table}
        present = []
        for i in order:
            r = table.get(i)
            if r is None:
                continue
            name = r.get("name") or r.get("label")
            present.append(name)
            if r.get("offline") and name in rows and not rows[name].get("offline"):
                offline_since.setdefault(name, []).append(last_push)
            rows[name] = r
            if r.get("state") == "driving" and r.get("driver"):
                driving[name] = driving.get(name, 0) + 1
    ws.close()
    write()


if __name__ == "__main__":
    main()
