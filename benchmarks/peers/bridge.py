#!/usr/bin/env python3
# The bridge a teacher would write: UDP state packets in, `W` lines out to the board's serial port.
# Usage: python3 bridge.py BOARD_TTY [PORT]    (PORT 0 takes any free port; default 27183)
# Mapping: the motors profile's defaults (Protocol.md 3.4). Like the reference receiver it writes
# only bytes that changed, one W per run of neighbouring addresses. No failsafe, no ownership: it is
# what we are compared with, not a safe receiver.
import math, os, select, signal, socket, struct, sys, tty

DEAD, LOCK = struct.unpack(">ff", struct.pack(">ff", 0.05, math.pi / 4))  # the mapping's binary32 values

def wheel(v):  # round half away from zero, then clamp to -127..127
    a = abs(v); r = math.floor(a)
    r = r + 1 if a - r >= 0.5 else r
    return max(-127, min(127, int(math.copysign(r, v))))

def values(angle, buttons):
    m = abs(angle)
    s = 0.0 if m <= DEAD else min(1.0, (m - DEAD) / (LOCK - DEAD))
    s = -s if angle < 0 else s
    fwd, back = bool(buttons & 1), bool(buttons & 2)
    t = 0 if fwd == back else (1 if fwd else -1)
    left, right = wheel(64 * (t + s)), wheel(64 * (t - s))
    return {0x0f: 255 if buttons & 4 else 0, 0x10: 255 if buttons & 8 else 0,  # A, B: LED1, LED2
            0x22: -left & 0xff, 0x23: right & 0xff}                            # left motor mirrored

def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    board = os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)
    tty.setraw(board)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("0.0.0.0", int(sys.argv[2]) if len(sys.argv) > 2 else 27183))
    print("receiving on udp port", sock.getsockname()[1], flush=True)
    last = {0x0f: 0, 0x10: 0, 0x22: 0, 0x23: 0}  # the board starts at rest
    while True:
        ready, _, _ = select.select([sock, board], [], [])
        if board in ready:
            os.read(board, 4096)  # echo, reply and prompt: not needed
        if sock in ready:
            data = sock.recv(64)
            if len(data) != 8:
                continue
            angle, buttons = struct.unpack(">fI", data)
            if not math.isfinite(angle):
                continue
            new = values(angle, buttons)
            changed = [a for a in sorted(new) if new[a] != last[a]]
            while changed:
                run = [changed.pop(0)]
                while changed and changed[0] == run[-1] + 1:
                    run.append(changed.pop(0))
                os.write(board, ("W %02x %s\n" % (run[0], "".join("%02x" % new[a] for a in run))).encode())
            last = new

main()
