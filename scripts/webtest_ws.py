"""A minimal WebSocket client (RFC 6455, client side only) on Python's standard library, for the
phone page test: it talks to Chromium's DevTools endpoint and, as a misbehaving "page", to
`analog-remote web` itself (malformed, oversized and flooding frames)."""
import base64
import json
import os
import socket
import ssl
import struct
import time
import urllib.parse


class Closed(Exception):
    def __init__(self, code, reason):
        super().__init__(f"closed {code} {reason!r}")
        self.code, self.reason = code, reason


class Refused(ConnectionError):
    """The server answered the upgrade with something other than 101: `status` is its status line."""

    def __init__(self, status, body):
        super().__init__("handshake refused: " + status)
        self.status, self.body = status, body


class WebSocket:
    def __init__(self, url, timeout=10.0, origin=None, source=None, cookie=None):
        """`origin`: the Origin header to send (a browser always sends one; None sends none).
        `source`: the local address to connect from (e.g. "127.0.0.5": another client address).
        `cookie`: a Cookie header to send (the dashboard's session)."""
        u = urllib.parse.urlsplit(url)
        secure = u.scheme in ("wss", "https")
        port = u.port or (443 if secure else 80)
        raw = socket.create_connection((u.hostname, port), timeout=timeout,
                                       source_address=(source, 0) if source else None)
        if secure:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE   # the server's self-signed certificate
            raw = ctx.wrap_socket(raw, server_hostname=u.hostname)
        self.sock = raw
        self.sock.settimeout(timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        path = (u.path or "/") + (("?" + u.query) if u.query else "")
        req = (f"GET {path} HTTP/1.1\r\nHost: {u.hostname}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
               + (f"Origin: {origin}\r\n" if origin else "") + (f"Cookie: {cookie}\r\n" if cookie else "") + "\r\n")
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("no handshake answer")
            head += chunk
        status, _, rest = head.partition(b"\r\n\r\n")
        if b" 101 " not in status.split(b"\r\n")[0]:
            self.sock.close()
            raise Refused(status.split(b"\r\n")[0].decode(errors="replace"), rest.decode(errors="replace"))
        self.buffer = rest
        self.closed = None

    def send_frame(self, opcode, payload, fin=True):
        header = bytes([(0x80 if fin else 0) | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send_text(self, text):
        self.send_frame(0x1, text.encode())

    def send_json(self, obj):
        self.send_text(json.dumps(obj))

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Closed(1006, "connection lost")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def recv(self, timeout=None):
        """The next text or binary message (str or bytes); answers pings; raises Closed."""
        if timeout is not None:
            self.sock.settimeout(timeout)
        message, opcode = b"", None
        while True:
            b0, b1 = self._read(2)
            op, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            if op == 0x9:
                self.send_frame(0xA, payload)
                continue
            if op == 0xA:
                continue
            if op == 0x8:
                code = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else 1005
                self.closed = (code, payload[2:].decode(errors="replace"))
                raise Closed(*self.closed)
            if op in (0x1, 0x2):
                opcode = op
            message += payload
            if b0 & 0x80:
                return message.decode() if opcode == 0x1 else message

    def close(self):
        try:
            self.send_frame(0x8, struct.pack(">H", 1000))
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass


class DevTools:
    """One page target of a headless Chromium, driven over the DevTools protocol."""

    def __init__(self, ws_url):
        self.ws = WebSocket(ws_url, timeout=20)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send_json({"id": my, "method": method, "params": params})
        while True:
            m = json.loads(self.ws.recv(timeout=20))
            if m.get("id") == my:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def pump(self, seconds=0.2):
        """Collects the events that arrive within `seconds` (no call pending)."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:
                self.events.append(json.loads(self.ws.recv(timeout=left)))
            except (socket.timeout, TimeoutError):
                return

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r.get("result", {}).get("value")

    def wait_for(self, expression, timeout=10.0, what=None):
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                seen = self.evaluate("[...document.querySelectorAll('#conn, #state, #error')]"
                                     ".map(e => e.id + '=' + JSON.stringify(e.textContent) + (e.hidden ? '(hidden)' : '')).join(' ')")
                raise AssertionError(f"timed out waiting for {what or expression}; the page shows {seen}")
            time.sleep(0.05)

    def center(self, selector):
        r = self.evaluate(f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                          f" return [r.left + r.width / 2, r.top + r.height / 2]; }})()")
        return {"x": r[0], "y": r[1]}
