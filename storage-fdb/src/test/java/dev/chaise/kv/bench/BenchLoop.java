package dev.chaise.kv.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/** The closed loop every benchmark here uses: N threads repeat an operation; a warm-up, then a timed window. */
public final class BenchLoop {
    private BenchLoop() {}

    /** The whole process's CPU time (all threads, RocksDB's included) per operation of the last {@link #run}. */
    public static volatile double lastCpuNanosPerOp;

    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** Runs {@code op} on {@code threads} threads and returns {@code done}'s rate per second over the timed window. */
    public static double run(int threads, int warmupSeconds, int seconds, LongAdder done, Runnable op) throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            ts.add(Thread.ofPlatform().start(() -> {
                while (!stop.get()) op.run();
            }));
        }
        Thread.sleep(warmupSeconds * 1_000L);
        long c0 = done.sum();
        long t0 = System.nanoTime();
        long cpu0 = processCpuNanos();
        Thread.sleep(seconds * 1_000L);
        long c1 = done.sum();
        long t1 = System.nanoTime();
        lastCpuNanosPerOp = (processCpuNanos() - cpu0) / (double) Math.max(1, c1 - c0);
        stop.set(true);
        for (Thread t : ts) t.join();
        return (c1 - c0) / ((t1 - t0) / 1e9);
    }
}
