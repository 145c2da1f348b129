#!/usr/bin/env python3
"""Shares of a `perf script` dump (src-it/bench/perf-phases.sh): CPU by thread and kind of code
(Java, RocksDB, kernel, JVM), then the frames with the largest inclusive share (a frame counts
once per sample, wherever on the stack). Java frames are Class.method; inlined methods do not show.

    python3 src-it/bench/perf-frames.py <phase>.script [frames to list, default 50] [--under FRAME]

--under FRAME lists what FRAME's samples spend in, one level down.
"""
import collections
import re
import sys

PLUMBING = re.compile(r'Continuation|VirtualThread\.run|runWorker|ForkJoin|thread_entry|JavaCalls|Interpreter|StubRoutines|'
                      r'start_thread|thread_native|Thread::call_run|JavaThread::|clone3|SingleThreadEventExecutor|'
                      r'FastThreadLocalRunnable|ThreadExecutorMap|Thread\.run|runContinuation|^\[jvm\]$')


def frame(line):
    line = re.sub(r'^\s*[0-9a-f]+ ', '', line.strip())
    m = re.search(r'\(([^)]*)\)\s*$', line)
    dso = m.group(1) if m else ''
    line = re.sub(r'\+0x[0-9a-f]+$', '', re.sub(r'\s*\([^)]*\)\s*$', '', line))
    m = re.match(r'^(?:[\w.$\[\]<>]+ )?([\w.$]+)\.([\w$<>]+)\(', line)
    if m:
        return m.group(1).split('.')[-1] + '.' + m.group(2), 'java'
    for key, kind in (('kernel', 'kernel'), ('rocksdb', 'rocksdb'), ('libjvm', 'jvm')):
        if key in dso:
            return '[' + kind + ']', kind
    return line[:60], 'java' if ('JIT' in dso or 'perf-' in dso) else 'native'


def thread(comm):
    comm = re.sub(r'[-#]?\d+$', '', comm.strip())
    if comm.startswith('ForkJoinPool'):
        return 'request threads (virtual, on ForkJoinPool)'
    if comm.startswith('multiThreadIo'):
        return 'event loops'
    if comm.startswith('C1 ') or comm.startswith('C2 '):
        return 'JIT compilers'
    return comm


def main():
    args = sys.argv[1:]
    under = None
    if '--under' in args:
        i = args.index('--under')
        under = args[i + 1]
        del args[i:i + 2]
    path = args[0]
    n = int(args[1]) if len(args) > 1 else 50
    total = 0
    inclusive = collections.Counter()
    by_thread = collections.Counter()
    below = collections.Counter()
    for block in open(path).read().split('\n\n'):
        lines = block.strip().split('\n')
        if len(lines) < 2:
            continue
        total += 1
        frames = [frame(x) for x in lines[1:]]
        comm = re.match(r'^\s*(.*?)\s+\d+(?:/\d+)?\s', lines[0])
        by_thread[(thread(comm.group(1) if comm else lines[0].split()[0]), frames[0][1])] += 1
        names = [f for f, _ in frames]
        for f in set(names):
            inclusive[f] += 1
        if under:
            hits = [i for i, f in enumerate(names) if under in f]
            if hits:
                i = max(hits)
                below[names[i - 1] if i > 0 else '(self)'] += 1
    pct = lambda v: f'{100 * v / total:5.1f}%'
    print(f'{total} samples')
    if under:
        print(f'under {under}: {pct(sum(below.values()))}')
        for f, v in below.most_common(n):
            print(f'  {pct(v)} {f}')
        return
    threads = collections.Counter()
    for (t, _), v in by_thread.items():
        threads[t] += v
    for t, v in threads.most_common(8):
        kinds = ', '.join(f'{k} {100 * by_thread[(t, k)] / total:.0f}' for k in ('java', 'rocksdb', 'kernel', 'jvm', 'native')
                          if by_thread[(t, k)] * 200 >= total)
        print(f'{pct(v)} {t} ({kinds})')
    print('inclusive:')
    shown = 0
    for f, v in inclusive.most_common():
        if PLUMBING.search(f):
            continue
        print(f'  {pct(v)} {f}')
        shown += 1
        if shown >= n:
            break


main()
