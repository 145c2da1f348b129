#!/usr/bin/env python3
"""Where the kernel put the server's woken threads, and how long each then waited to run.

Reads `perf script` output of a system-wide recording of the scheduler's switch and wake-up
events, for example during one couchbench phase:

    perf record -e sched:sched_switch -e sched:sched_wakeup -a -o sched.data &   # then the phase
    perf script -i sched.data > sched.txt
    python3 src-it/bench/wake-placement.py sched.txt [thread-name regex]

For every wake-up of a thread whose name matches (default: virtual-thread carriers, the KV writer
threads, Netty's event loops) it notes whether the thread was put on the waker's CPU or another,
and what the other CPU was running at that moment (idle or a named thread); it then measures the
wait from the wake-up to the thread's switch-in. docs/benchmarks.md (issue 27, "a part's late
start") has a run: on the two-vCPU VM most wake-ups went to the waker's CPU while the other was
idle, and those whose waker went on running waited out its time slice (p90 288 us, at worst 4 ms).
Two-CPU machines only: "the other CPU" is the one that is not the target.
"""
import collections
import re
import sys

SWITCH = re.compile(r'\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+): sched:sched_switch: .*next_comm=(.*) next_pid=(\d+)')
WAKEUP = re.compile(r'\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+): sched:sched_wakeup: comm=(.*) pid=(\d+) prio=\d+ target_cpu=(\d+)')


def main():
    path = sys.argv[1]
    names = re.compile(sys.argv[2] if len(sys.argv) > 2 else r'(ForkJoinPool|chaise-kv|multiThreadIo)')
    running = {0: 'swapper', 1: 'swapper'}
    pending = {}  # woken pid -> (time, case)
    waits = collections.defaultdict(list)
    for line in open(path, errors='replace'):
        m = SWITCH.match(line)
        if m:
            cpu, t, comm, pid = int(m.group(3)), float(m.group(4)), m.group(5), m.group(6)
            running[cpu] = comm
            if pid in pending:
                t0, case = pending.pop(pid)
                waits[case].append((t - t0) * 1e6)
            continue
        m = WAKEUP.match(line)
        if not m or not names.search(m.group(5)):
            continue
        waker_cpu, t, pid, target = int(m.group(3)), float(m.group(4)), m.group(6), int(m.group(7))
        other = running.get(1 - target, '?')
        where = "the waker's CPU" if target == waker_cpu else 'another CPU'
        beside = 'other CPU idle' if other.startswith('swapper') else 'other CPU runs ' + re.sub(r'[#\d]+$', '', other)[:16]
        pending[pid] = (t, (where, beside))
    print('%-18s %-34s %6s %8s %8s %8s' % ('woken onto', 'meanwhile', 'n', 'p50 us', 'p90 us', 'max us'))
    for case, v in sorted(waits.items(), key=lambda kv: -len(kv[1])):
        v.sort()
        print('%-18s %-34s %6d %8.0f %8.0f %8.0f' % (case[0], case[1], len(v), v[len(v) // 2], v[len(v) * 9 // 10], v[-1]))


if __name__ == '__main__':
    main()
