#!/usr/bin/env python3
"""Where the time of one receive-path sample goes, from kernel trace points.

`analog-remote bench --only receive` sends one 8-byte datagram per sample and waits for the `W`
line on the board pty. Recorded with

    perf record -e sched:sched_switch -e sched:sched_wakeup -e syscalls:sys_enter_sendto \
        -e syscalls:sys_exit_recvfrom -e syscalls:sys_enter_write -e syscalls:sys_exit_read \
        -e syscalls:sys_exit_poll -a -o perf.data -- \
        .build/release/analog-remote bench --quick --only receive
    perf script -i perf.data -F tid,time,event,trace > perf.txt
    scripts/bench-timeline.py perf.txt

this splits every sample into the steps of the path and prints their percentiles (µs):

    A  bench sendto          → receive loop's poll returns     (UDP wake-up)
    B  poll returns          → receive loop writes the wake-up pipe (recvfrom, engine, hand-off)
    C  pipe written          → board link thread's poll returns (pipe wake-up)
    D  poll returns          → board link thread writes the W line (writer, session, framing)
    E  W line written        → bench's read of it returns      (pty: flip-buffer worker, wake-up)

Trace points cost time themselves (perf runs on the same two CPUs): read the split, not the sum.
"""
import re
import sys

LINE = re.compile(r"^\s*(\d+)\s+(\d+\.\d+):\s+(\S+):\s*(.*)$")


def events(path):
    with open(path) as f:
        for raw in f:
            m = LINE.match(raw)
            if m:
                yield int(m.group(1)), float(m.group(2)) * 1e6, m.group(3), m.group(4)


def percentile(values, p):
    s = sorted(values)
    rank = max(1, -(-len(s) * p // 100))
    return s[int(min(rank, len(s))) - 1]


def main(path):
    steps = {k: [] for k in "ABCDE"}
    state = None  # (stage, t_prev, tids)
    for tid, t, name, args in events(path):
        if name == "syscalls:sys_enter_sendto" and "len: 0x00000008" in args:
            state = ("A", t, {"bench": tid})
            continue
        if state is None:
            continue
        stage, prev, tids = state
        if stage == "A" and name == "syscalls:sys_exit_poll" and tid != tids["bench"]:
            tids["receiver"] = tid
            steps["A"].append(t - prev)
            state = ("B", t, tids)
        elif stage == "B" and name == "syscalls:sys_enter_write" and tid == tids["receiver"] and "count: 0x00000001" in args:
            steps["B"].append(t - prev)
            state = ("C", t, tids)
        elif stage == "C" and name == "syscalls:sys_exit_poll" and tid not in (tids["bench"], tids["receiver"]):
            tids["board"] = tid
            steps["C"].append(t - prev)
            state = ("D", t, tids)
        elif stage == "D" and name == "syscalls:sys_enter_write" and tid == tids["board"] and "count: 0x0000000a" in args:
            steps["D"].append(t - prev)
            state = ("E", t, tids)
        elif stage == "E" and name == "syscalls:sys_exit_read" and tid == tids["bench"] and args.strip() == "0xa":
            steps["E"].append(t - prev)
            state = None
    names = {
        "A": "sendto → receive loop wakes (UDP)",
        "B": "receive loop: recvfrom, engine, hand-off",
        "C": "pipe → board link thread wakes",
        "D": "board link thread: writer, session, write",
        "E": "W written → bench reads it (pty)",
    }
    print(f"{'step':<44} {'n':>6} {'p50':>8} {'p90':>8} {'p99':>8}")
    for k in "ABCDE":
        v = steps[k]
        if v:
            print(f"{k} {names[k]:<42} {len(v):>6} {percentile(v, 50):>8.1f} {percentile(v, 90):>8.1f} {percentile(v, 99):>8.1f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "perf.txt")
