#!/usr/bin/env python3
"""Writes a long, lively drive recording (Protocol.md §10) to stdout, the same for the same seed:
a driver who never stops steering for MINUTES minutes at 50 states a second, with full locks,
stops, button presses, a link measurement each second, the robot's sensors and switch, a
failsafe and a teacher's stop now and then. For `plot`'s picture of a whole lesson (its test, and
its timing by hand: the default, 90 minutes, is about 16 MiB).

Usage: lively-recording.py [--minutes N] [--seed N] > lesson.jsonl
"""
import argparse
import json
import math
import random
import sys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=90.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    out = sys.stdout
    out.write(json.dumps({"format": "analog-remote-recording", "version": 1, "kind": "drive",
                          "start": "2026-11-25T09:00:00.000Z", "start_unix_ms": 1795597200000,
                          "input": "gamepad", "receiver": "127.0.0.1:27183", "session": "class-3b", "rate": 50},
                         separators=(",", ":")) + "\n")
    lock = 1.5707963705062866  # ±π/2 as the wire's binary32
    steps = int(args.minutes * 60 * 50)
    angle, buttons = 0.0, 0
    sensors = [128, 64, 0, 200]
    switch = 0
    held_until = -1.0  # a failsafe or a teacher's stop holds the robot until then
    for i in range(steps):
        t = i * 0.02 + rng.random() * 0.0005
        # Steering: a random walk, a full lock now and then, back to the middle now and then.
        r = rng.random()
        if r < 0.004:
            angle = lock if rng.random() < 0.5 else -lock
        elif r < 0.008:
            angle = 0.0
        else:
            angle = max(-lock, min(lock, angle + rng.gauss(0, 0.05)))
        # Throttle: forward, backward or a stop; A and B tapped.
        if rng.random() < 0.01:
            buttons = rng.choice([0, 1, 1, 1, 2])
        if rng.random() < 0.005:
            buttons ^= 4
        if rng.random() < 0.003:
            buttons ^= 8
        # Four decimals cut toward zero (rounding could step past the lock); a full lock exactly.
        text = repr(angle) if abs(angle) == lock else f"{math.trunc(angle * 1e4) / 1e4:.4f}"
        out.write(f'{{"t":{t:.6f},"e":"state","angle":{text},"buttons":{buttons}}}\n')
        if i % 50 == 25:
            rtt = round(0.3 + rng.expovariate(3), 3)
            loss = round(rng.choice([0, 0, 0, 0, 0.02, 0.1]), 3)
            out.write(f'{{"t":{t + 0.001:.6f},"e":"link","rtt_ms":{rtt},"loss":{loss}}}\n')
        if i % 25 == 5:
            sensors = [max(0, min(255, s + rng.randint(-12, 12))) for s in sensors]
            if rng.random() < 0.05:
                switch = 0 if switch else 1
            out.write(f'{{"t":{t + 0.002:.6f},"e":"sensors","sensor1":{sensors[0]},"sensor2":{sensors[1]},'
                      f'"sensor3":{sensors[2]},"sensor4":{sensors[3]},"switch":{switch},"temperature":21,"humidity":40}}\n')
        if held_until < 0 and rng.random() < 0.0004:
            held_until = t + rng.uniform(0.3, 3)
            state, detail = ("teacher-stop", "") if rng.random() < 0.3 else ("failsafe", "silence")
            out.write(f'{{"t":{t + 0.003:.6f},"e":"robot","state":"{state}","detail":"{detail}"}}\n')
        elif 0 <= held_until < t:
            held_until = -1.0
            out.write(f'{{"t":{t + 0.003:.6f},"e":"robot","state":"driving","detail":""}}\n')
    end = steps * 0.02
    out.write(f'{{"t":{end:.6f},"e":"end","reason":"finished"}}\n')


if __name__ == "__main__":
    main()
