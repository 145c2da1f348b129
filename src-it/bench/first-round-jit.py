#!/usr/bin/env python3
"""What C2 compiled in each measured phase of src-it/bench/first-round-jit.sh's run: compilations,
their compiler time, how much of it recompiled a method C2 had compiled before (after a
deoptimization), how much went to methods that until then had run only C1's tier 2 (counters, no
profile of their own), the largest compilations and the deoptimizations' commonest reasons.

    python3 src-it/bench/first-round-jit.py <run dir> [compilations to list per phase, default 8]
"""
import collections
import datetime
import json
import sys


def when(s):
    return datetime.datetime.fromisoformat(s.replace('Z', '+00:00')).timestamp()


def seconds(s):  # ISO 8601 duration, "PT0.0123S"
    s = s[2:-1]
    return float(s) if s else 0.0


def main():
    run = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    events = json.load(open(run + '/jit.json'))['recording']['events']
    events.sort(key=lambda e: e['values']['startTime'])
    phases = [(p, float(open(f'{run}/{p}.t0').read()), float(open(f'{run}/{p}.t1').read())) for p in ('put', 'bulk', 'get', 'view')]
    levels = collections.defaultdict(set)  # method -> tiers compiled so far
    c2 = set()
    per = {p: {'n': 0, 's': 0.0, 're': 0.0, 'l2': 0.0, 'list': [], 'deopt': collections.Counter()} for p, _, _ in phases}
    before = 0.0
    for e in events:
        v = e['values']
        m = v['method']
        name = m['type']['name'].split('/')[-1] + '.' + m['name']
        key = name + m.get('descriptor', '')
        t = when(v['startTime'])
        phase = next((p for p, a, b in phases if a <= t <= b), None)
        if e['type'] == 'jdk.Deoptimization':
            if phase:
                per[phase]['deopt'][f"{name} {v.get('reason')}"] += 1
            continue
        d = seconds(v['duration'])
        if v['compileLevel'] == 4:
            if phase:
                s = per[phase]
                s['n'] += 1
                s['s'] += d
                if key in c2:
                    s['re'] += d
                if 2 in levels[key] and 3 not in levels[key]:
                    s['l2'] += d
                s['list'].append((d, v.get('isOsr'), v.get('inlinedBytes'), name, key in c2))
            elif t < phases[0][1]:
                before += d
            c2.add(key)
        levels[key].add(v['compileLevel'])
    print(f'C2 before the measured phases: {before:.2f} s')
    for p, _, _ in phases:
        s = per[p]
        print(f"== {p}: C2 compiled {s['n']} methods in {s['s']:.2f} s; recompiles {s['re']:.2f} s; "
              f"methods that had run only at tier 2 {s['l2']:.2f} s; deoptimizations {sum(s['deopt'].values())}")
        for d, osr, inl, name, re in sorted(s['list'], reverse=True)[:top]:
            print(f"   {d * 1000:6.0f} ms {'OSR ' if osr else ''}{'again ' if re else ''}{name} ({inl} bytes inlined)")
        if s['deopt']:
            print('   deoptimized: ' + '; '.join(f'{k} x{n}' for k, n in s['deopt'].most_common(5)))


main()
