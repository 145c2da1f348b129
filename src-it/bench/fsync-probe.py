#!/usr/bin/env python3
"""What a small write and fdatasync cost on this disk, by where the write lands: appending (the
file's size moves, so the inode is written too), past the end into blocks preallocated with
FALLOC_FL_KEEP_SIZE (how RocksDB preallocates its WAL), or inside the file's length (sparse,
allocated but unwritten, or written with zeros and synced before: an overwrite). docs/benchmarks.md ("the WAL's length") has runs of it.

    python3 src-it/bench/fsync-probe.py [directory, default /tmp] [writes, default 3000] [bytes, default 700]
"""
import ctypes
import os
import sys
import time

FALLOC_FL_KEEP_SIZE = 1
libc = ctypes.CDLL("libc.so.6", use_errno=True)


def probe(path, mode, n, size):
    fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
    try:
        ahead = n * size + (1 << 20)
        if mode == "keep-size":
            if libc.fallocate(fd, FALLOC_FL_KEEP_SIZE, ctypes.c_long(0), ctypes.c_long(ahead)) != 0:
                raise OSError(ctypes.get_errno(), "fallocate")
        elif mode == "sparse":
            os.ftruncate(fd, ahead)
        elif mode == "allocated":
            os.posix_fallocate(fd, 0, ahead)
        elif mode == "written":
            zeros = bytes(1 << 20)
            for _ in range(0, ahead, len(zeros)):
                os.write(fd, zeros)
            os.lseek(fd, 0, os.SEEK_SET)
        os.fsync(fd)
        buf = b"x" * size
        waits = []
        cpu = time.process_time()
        for _ in range(n):
            os.write(fd, buf)
            t = time.perf_counter()
            os.fdatasync(fd)
            waits.append(time.perf_counter() - t)
        cpu = time.process_time() - cpu
    finally:
        os.close(fd)
        os.unlink(path)
    waits.sort()
    print("%-10s fdatasync p50 %4.0f us, mean %4.0f us, p90 %4.0f us; CPU a write and fsync %3.0f us"
          % (mode, waits[n // 2] * 1e6, sum(waits) / n * 1e6, waits[int(n * 0.9)] * 1e6, cpu / n * 1e6))


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 700
    path = os.path.join(directory, "fsync-probe-%d.dat" % os.getpid())
    for _ in range(2):  # twice, alternating: one run of a mode moves with the machine
        for mode in ("append", "keep-size", "sparse", "allocated", "written"):
            probe(path, mode, n, size)


if __name__ == "__main__":
    main()
