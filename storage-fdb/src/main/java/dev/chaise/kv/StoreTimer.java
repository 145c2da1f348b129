package dev.chaise.kv;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * The one timer every wait goes through: each named event accumulates a count and total
 * nanoseconds, and counters count occurrences. Its snapshot is the metrics.
 */
public final class StoreTimer {

    /** A timed wait. Layers above add their own enums. */
    public interface Event {
        String name();
    }

    /** A counted occurrence. */
    public interface Count {
        String name();
    }

    /** The waits of the KV seam itself. */
    public enum Waits implements Event { GET_READ_VERSION, GET, GET_KEY, RANGE_READ, COMMIT, RETRY_BACKOFF, WATCH }

    /** What the KV seam counts. */
    public enum Counts implements Count { COMMITS, COMMIT_BATCHES, READ_ONLY_COMMITS, RETRIES, CONFLICTS, TOO_OLD, COMMIT_UNKNOWN, INJECTED_FAULTS }

    public record Stat(long count, long totalNanos) {}

    /** Keyed by the event or count itself (an enum constant): no name is built on the hot path. */
    private final Map<Object, LongAdder[]> events = new ConcurrentHashMap<>();

    private LongAdder[] adders(Object key) {
        LongAdder[] a = events.get(key);
        return a != null ? a : events.computeIfAbsent(key, k -> new LongAdder[] {new LongAdder(), new LongAdder()});
    }

    public void record(Event event, long nanos) {
        LongAdder[] a = adders(event);
        a[0].increment();
        a[1].add(nanos);
    }

    public void increment(Count count) {
        add(count, 1);
    }

    public void add(Count count, long n) {
        adders(count)[0].add(n);
    }

    public <T> T time(Event event, Supplier<T> wait) {
        long start = System.nanoTime();
        try {
            return wait.get();
        } finally {
            record(event, System.nanoTime() - start);
        }
    }

    public void time(Event event, Runnable wait) {
        long start = System.nanoTime();
        try {
            wait.run();
        } finally {
            record(event, System.nanoTime() - start);
        }
    }

    public long count(Count count) {
        LongAdder[] a = events.get(count);
        return a == null ? 0 : a[0].sum();
    }

    public Stat stat(Event event) {
        LongAdder[] a = events.get(event);
        return a == null ? new Stat(0, 0) : new Stat(a[0].sum(), a[1].sum());
    }

    /** Every event ({@code wait.NAME}) and counter ({@code count.NAME}) by name, sorted. */
    public Map<String, Stat> snapshot() {
        Map<String, Stat> out = new TreeMap<>();
        events.forEach((k, v) -> {
            String name = k instanceof Event e ? "wait." + e.name() : "count." + ((Count) k).name();
            out.merge(name, new Stat(v[0].sum(), v[1].sum()), (x, y) -> new Stat(x.count() + y.count(), x.totalNanos() + y.totalNanos()));
        });
        return out;
    }
}
