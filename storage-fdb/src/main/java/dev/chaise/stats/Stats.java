package dev.chaise.stats;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.LongSupplier;

/**
 * The metrics registry of one server, below every module that counts (storage, views, the
 * replicator, HTTP), so each counts where the thing happens without knowing who shows it. A
 * metric is named by CouchDB's {@code _stats} path ({@code couchdb.database_reads},
 * {@code couch_replicator.jobs.starts}); what CouchDB does not have is under {@code chaise.}.
 *
 * <p>A counting class asks for its meters once, when it is built, and keeps them in fields: a
 * count on a hot path is one {@link java.util.concurrent.atomic.LongAdder} increment, with no
 * lookup by name. Asking again for the same path gives the same meter.
 */
public final class Stats {
    /** What {@code _stats} calls a metric's type. */
    public enum Type { COUNTER, GAUGE, HISTOGRAM }

    /**
     * One metric: its path, and, for a family such as {@code couchdb.httpd_status_codes}, the name
     * of the label its last path element is in Prometheus ({@code code}); null otherwise.
     */
    public sealed interface Metric permits Counter, Gauge, Histogram {
        String path();

        String label();

        String desc();

        Type type();
    }

    private final ConcurrentSkipListMap<String, Metric> metrics = new ConcurrentSkipListMap<>();
    /** CouchDB's {@code [stats] interval}, in nanoseconds: read by every histogram record. */
    private volatile long windowNanos = Duration.ofSeconds(10).toNanos();

    /** A counter counted here. */
    public Counter counter(String path, String desc) {
        return counter(path, null, desc);
    }

    /** A counter of a family whose last path element is the value of {@code label}. */
    public Counter counter(String path, String label, String desc) {
        return (Counter) metrics.computeIfAbsent(path, p -> new Counter(p, label, desc, null));
    }

    /** A counter kept elsewhere (a store timer's count), read at each scrape. */
    public void counter(String path, String label, String desc, LongSupplier read) {
        metrics.put(path, new Counter(path, label, desc, read));
    }

    /** A value read at each scrape (open databases, running jobs). */
    public void gauge(String path, String desc, LongSupplier read) {
        metrics.put(path, new Gauge(path, desc, read));
    }

    /** A histogram of times in milliseconds (or of sizes, as CouchDB's {@code httpd.bulk_docs}), over the last {@link #window}. */
    public Histogram histogram(String path, String desc) {
        return (Histogram) metrics.computeIfAbsent(path, p -> new Histogram(p, desc, this));
    }

    /** CouchDB's {@code [stats] interval}: what a histogram's figures cover. */
    public void window(Duration window) {
        this.windowNanos = Math.max(1, window.toNanos());
    }

    long windowNanos() {
        return windowNanos;
    }

    /** Every metric, in path order. */
    public List<Metric> all() {
        return new ArrayList<>(metrics.values());
    }

    public Metric get(String path) {
        return metrics.get(path);
    }

    /** A value read at each scrape. */
    public record Gauge(String path, String desc, LongSupplier read) implements Metric {
        @Override
        public String label() {
            return null;
        }

        @Override
        public Type type() {
            return Type.GAUGE;
        }

        public long value() {
            return read.getAsLong();
        }
    }
}
