#!/usr/bin/env python3
"""How often an idle analog-remote process wakes up, on loopback only.

  scripts/idle-wakeups.py BINARY web|receive [SECONDS]

web: a receiver on a simulated board with a teacher key (one robot, watched once a second: the
protocol's own timer), `web --peer` for it with the same key, and a logged-in dashboard WebSocket
open on it. receive: `receive --board sim --no-advertise`. After 3 s to settle, prints the
context switches summed over the process's threads (/proc/PID/task/*/status, voluntary and not)
over SECONDS (default 20), per thread. With STRACE=1 it first counts the calls that put a thread
to sleep with `strace -f -c` over the same window (STRACE_MODE=-tt lists them instead)."""
import base64, glob, os, re, signal, socket, subprocess, sys, tempfile, time

binary, mode = sys.argv[1], sys.argv[2]
window = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0


def switches(pid):
    total, per = 0, {}
    for st in glob.glob(f"/proc/{pid}/task/*/status"):
        try:
            text = open(st).read()
        except OSError:
            continue
        name = re.search(r"^Name:\s*(.*)$", text, re.M).group(1)
        n = sum(int(v) for v in re.findall(r"^(?:non)?voluntary_ctxt_switches:\s*(\d+)", text, re.M))
        per[st.split("/")[4]] = (name, n)
        total += n
    return total, per


tmp = tempfile.mkdtemp()
env = dict(os.environ, XDG_STATE_HOME=tmp, HOME=tmp)
procs = []
try:
    if mode == "receive":
        target = subprocess.Popen([binary, "receive", "--config", "/dev/null", "--quiet", "--no-advertise", "--port", "0",
                                   "--board", "sim"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        procs.append(target)
        print(target.stdout.readline().decode().strip())
    else:
        key = "ark1-" + "5a" * 32
        keyfile = os.path.join(tmp, "teacher.key")
        with open(keyfile, "w") as f:
            f.write(key + "\n")
        os.chmod(keyfile, 0o600)
        robot = subprocess.Popen([binary, "receive", "--config", "/dev/null", "--quiet", "--no-advertise", "--port", "0",
                                  "--board", "sim", "--session", "idle", "--teacher-key-file", keyfile, "--state-dir", tmp],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        procs.append(robot)
        robot_port = int(robot.stdout.readline().decode().split()[-1])
        target = subprocess.Popen([binary, "web", "--quiet", "--plain-http", "--host", "127.0.0.1", "--port", "0", "--no-qr",
                                   "--teacher-key-file", keyfile, "--session", "idle", "--peer", f"127.0.0.1:{robot_port}"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        procs.append(target)
        line = target.stdout.readline().decode()
        port = int(line.split()[-1])
        print(line.strip())
        s = socket.create_connection(("127.0.0.1", port))
        body = "key=" + key
        s.sendall((f"POST /teacher/login HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                   f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}").encode())
        resp = b""
        while chunk := s.recv(4096):
            resp += chunk
        s.close()
        cookie = re.search(rb"[Ss]et-[Cc]ookie: ([^;\r\n]+)", resp).group(1).decode()
        ws = socket.create_connection(("127.0.0.1", port))
        nonce = base64.b64encode(os.urandom(16)).decode()
        ws.sendall((f"GET /teacher/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    f"Sec-WebSocket-Key: {nonce}\r\nSec-WebSocket-Version: 13\r\nOrigin: http://127.0.0.1:{port}\r\n"
                    f"Cookie: {cookie}\r\n\r\n").encode())
        head = ws.recv(4096)
        assert b" 101 " in head.split(b"\r\n")[0], head[:200]
        print("dashboard websocket open")
        ws.setblocking(False)
    time.sleep(3)
    if os.environ.get("STRACE"):
        out = subprocess.run(["timeout", "-s", "INT", str(int(window)), "strace", "-f", os.environ.get("STRACE_MODE", "-c"),
                              "-e", "trace=poll,ppoll,epoll_wait,epoll_pwait,nanosleep,clock_nanosleep,futex",
                              "-p", str(target.pid)], capture_output=True, text=True)
        print("\n".join(l for l in out.stderr.splitlines() if "attached" not in l and "detached" not in l))
    t0, per0 = switches(target.pid)
    start = time.time()
    received = 0
    while time.time() - start < window:
        time.sleep(0.5)
        if mode == "web":
            try:
                while d := ws.recv(65536):
                    received += len(d)
            except BlockingIOError:
                pass
    elapsed = time.time() - start
    t1, per1 = switches(target.pid)
    print(f"context switches over {elapsed:.1f} s: {t1 - t0} = {(t1 - t0) / elapsed:.2f}/s"
          + (f" (dashboard bytes received {received})" if mode == "web" else ""))
    for tid, (name, n) in sorted(per1.items(), key=lambda kv: -(kv[1][1] - per0.get(kv[0], ("", 0))[1])):
        d = n - per0.get(tid, ("", 0))[1]
        if d:
            print(f"  {name:20s} tid {tid}: {d} ({d / elapsed:.2f}/s)")
finally:
    for p in procs:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
