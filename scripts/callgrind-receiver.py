#!/usr/bin/env python3
"""Instructions per datagram and per wake-up of the receiver, from a callgrind profile.

Recorded on the receiver child of the scale bench (valgrind 3.19 needs the debug info stripped):

    cp .build/release/analog-remote /tmp/ar && strip -g /tmp/ar
    BENCH_RECEIVER_WRAPPER="valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p" \
        /tmp/ar bench --quick --only scale --controllers 64
    scripts/callgrind-receiver.py /tmp/cg.<pid> [REGEX ...]

prints the wake-ups (calls of the loop's poll), the datagrams (calls of `ReceiverService.take`),
the loop's own cost per wake-up (outside the drain and the poll), the drain's per datagram, and
for each REGEX the functions whose mangled name matches it: calls and instructions per call,
counted on the edges into them (inclusive). Counts are exact and repeatable whatever the
machine's load; what is inlined has no edge of its own (its cost is its caller's).
"""
import collections
import re
import sys


def read(path):
    """Call edges (caller, callee) → [calls, inclusive Ir], and each function's own Ir."""
    names, edges, own = {}, collections.defaultdict(lambda: [0, 0]), collections.Counter()

    def name(token):
        m = re.match(r'\((\d+)\)(?: (.*))?', token)
        if not m:
            return token
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), m.group(1))

    fn = callee = pending = None
    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        if line.startswith('fn='):
            fn = name(line[3:])
        elif line.startswith('cfn='):
            callee = name(line[4:])
        elif line.startswith('calls='):
            pending = (callee, int(line[6:].split()[0]))
        elif line and (line[0].isdigit() or line[0] in '+-*'):
            parts = line.split()
            if len(parts) < 2:
                continue
            cost = int(parts[-1])
            if pending:
                edge = edges[(fn, pending[0])]
                edge[0] += pending[1]
                edge[1] += cost
                pending = None
            else:
                own[fn] += cost
    return edges, own


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    edges, own = read(sys.argv[1])
    into = collections.defaultdict(lambda: [0, 0])
    for (_, callee), (n, ir) in edges.items():
        into[callee][0] += n
        into[callee][1] += ir
    loop = re.compile(r'ServiceC4loop')
    out = {callee: v for (caller, callee), v in edges.items() if loop.search(caller)}
    wakes = sum(n for c, (n, _) in out.items() if 'PollerO4wait' in c)
    drain = sum(ir for c, (_, ir) in out.items() if 'receiveBatch' in c)
    poll = sum(ir for c, (_, ir) in out.items() if 'PollerO4wait' in c)
    total = sum(ir for _, ir in out.values()) + sum(c for f, c in own.items() if loop.search(f))
    datagrams = sum(n for c, (n, _) in into.items() if re.search(r'ServiceC4take_6length', c))
    if wakes and datagrams:
        print(f"wake-ups {wakes}, datagrams {datagrams}: loop outside the drain and poll "
              f"{(total - drain - poll) / wakes:,.0f} Ir a wake-up; the drain {drain / datagrams:,.0f} Ir a datagram")
    for pattern in sys.argv[2:]:
        rows = [(c, n, ir) for c, (n, ir) in into.items() if re.search(pattern, c) and n]
        for c, n, ir in sorted(rows, key=lambda r: -r[2])[:8]:
            print(f"{ir / n:10,.0f} Ir/call {n:9d} calls  {c[:140]}")


if __name__ == '__main__':
    main()
