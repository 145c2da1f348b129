package dev.chaise.http.bench;

import dev.chaise.http.metrics.Metrics;

/**
 * What counting one request costs ({@link Metrics#request}: the request counter, its method and
 * status counters, and {@code request_time}'s histogram), on 1 and 2 threads at once.
 *
 * <p>Run, after {@code test-compile}: {@code java -cp http-api/target/test-classes:http-api/target/classes:storage-fdb/target/classes
 * dev.chaise.http.bench.MetricsBench}. Figures go to docs/benchmarks.md.
 */
public final class MetricsBench {
    private static final int CALLS = 5_000_000;

    private MetricsBench() {}

    public static void main(String[] args) throws InterruptedException {
        Metrics m = Metrics.standalone();
        Runnable calls = () -> {
            for (int i = 0; i < CALLS; i++) m.request((i & 3) == 0 ? "PUT" : "GET", (i & 7) == 0 ? 404 : 200, true, 1_000_000L + (i & 1023) * 1000L);
        };
        for (int round = 0; round < 4; round++) {
            for (int threads = 1; threads <= 2; threads++) {
                Thread[] t = new Thread[threads];
                long start = System.nanoTime();
                for (int i = 0; i < threads; i++) (t[i] = new Thread(calls)).start();
                for (Thread x : t) x.join();
                // the first two rounds warm the JIT up
                if (round >= 2) System.out.printf("threads=%d %.0f ns per request%n", threads, (System.nanoTime() - start) / (double) CALLS);
            }
        }
    }
}
