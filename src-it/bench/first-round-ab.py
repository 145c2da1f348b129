#!/usr/bin/env python3
"""The pairs of src-it/bench/first-round-ab.sh: per phase, each side's figures in round 1 (PUT and
bulk in documents a second, GET in requests a second, the view build in seconds) and the C2 time
inside the phase, sorted, with the medians, and in how many pairs the first side did better.

    python3 src-it/bench/first-round-ab.py <out dir> <label a> <label b>
"""
import glob
import json
import os
import re
import statistics
import sys

PHASES = (('put', 'docs_per_s', True), ('bulk', 'docs_per_s', True), ('get', 'req_per_s', True), ('view', 'build_seconds', False))


def figure(run, phase, key):
    """The phase's figure from couchbench's --json result, which first-round-jit.sh keeps per phase."""
    try:
        return float(json.load(open(f'{run}/run/{phase}.json'))[phase][key])
    except (OSError, ValueError, KeyError):
        return None


def c2(log, phase):
    try:
        m = re.search(rf'^== {phase}: C2 compiled \d+ methods in ([0-9.]+) s', open(log).read(), re.M)
    except OSError:
        return None
    return float(m.group(1)) if m else None


def main():
    out, a, b = sys.argv[1:4]
    pairs = sorted(int(d.rsplit('-', 1)[1]) for d in glob.glob(f'{out}/{a}-*') if os.path.isdir(d) and os.path.isdir(d.replace(f'/{a}-', f'/{b}-')))
    print(f'{len(pairs)} pairs in {out}')
    for phase, key, higher in PHASES:
        values = {s: [figure(f'{out}/{s}-{i}', phase, key) for i in pairs] for s in (a, b)}
        jit = {s: [c2(f'{out}/{s}-{i}.log', phase) for i in pairs] for s in (a, b)}
        both = [(x, y) for x, y in zip(values[a], values[b]) if x and y]
        wins = sum(1 for x, y in both if (x > y if higher else x < y))
        print(f'{phase} ({key}): {a} better in {wins} of {len(both)} pairs')
        for s in (a, b):
            v = sorted(x for x in values[s] if x)
            j = sorted(x for x in jit[s] if x is not None)
            print(f'  {s:>8}: median {statistics.median(v):10.2f}  [{" ".join(f"{x:g}" for x in v)}]')
            if j:
                print(f'  {"":>8}  C2 in the phase, median {statistics.median(j):.2f} s  [{" ".join(f"{x:g}" for x in j)}]')


main()
