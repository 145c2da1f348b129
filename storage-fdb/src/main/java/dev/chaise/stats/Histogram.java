package dev.chaise.stats;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;

/**
 * CouchDB's histogram (folsom's, over a sliding window of {@code [stats] interval} seconds): values
 * recorded in the last one to two windows, kept as counts per bucket (eight buckets per doubling,
 * from 0.001 up, so a percentile is within 12.5 % of the value) with exact count, sum, sum of
 * squares, minimum and maximum. Recording is a few atomic adds and no logarithm (a bucket is the
 * value's binary exponent and its first three mantissa bits); the window turns over lazily.
 */
public final class Histogram implements Stats.Metric {
    /** CouchDB's percentiles, as it names them. */
    public static final int[] PERCENTILES = {50, 75, 90, 95, 99, 999};
    /** Sub-buckets per doubling, as mantissa bits. */
    private static final int SUB_BITS = 3;
    private static final int BUCKETS = 1 + (48 << SUB_BITS);

    private final String path;
    private final String desc;
    private final Stats owner;
    private final Slot[] slots = {new Slot(), new Slot()};

    Histogram(String path, String desc, Stats owner) {
        this.path = path;
        this.desc = desc;
        this.owner = owner;
    }

    /** One window's figures. */
    private static final class Slot {
        volatile long epoch = Long.MIN_VALUE;
        final AtomicLongArray buckets = new AtomicLongArray(BUCKETS);
        final LongAdder n = new LongAdder();
        final DoubleAdder sum = new DoubleAdder();
        final DoubleAdder squares = new DoubleAdder();
        final AtomicLong min = new AtomicLong(Double.doubleToLongBits(Double.POSITIVE_INFINITY));
        final AtomicLong max = new AtomicLong(Double.doubleToLongBits(Double.NEGATIVE_INFINITY));

        void reset(long epoch) {
            for (int i = 0; i < BUCKETS; i++) buckets.set(i, 0);
            n.reset();
            sum.reset();
            squares.reset();
            min.set(Double.doubleToLongBits(Double.POSITIVE_INFINITY));
            max.set(Double.doubleToLongBits(Double.NEGATIVE_INFINITY));
            this.epoch = epoch;
        }
    }

    private long epoch() {
        return System.nanoTime() / owner.windowNanos();
    }

    /** The slot of the window now, emptied first if it last held an older window. */
    private Slot current() {
        long e = epoch();
        Slot s = slots[(int) (e & 1)];
        if (s.epoch != e) {
            synchronized (s) {
                if (s.epoch != e) s.reset(e);
            }
        }
        return s;
    }

    /** A time in nanoseconds, recorded in milliseconds as CouchDB's times are. */
    public void recordNanos(long nanos) {
        record(nanos / 1e6);
    }

    public void record(double value) {
        Slot s = current();
        s.buckets.incrementAndGet(bucket(value));
        s.n.increment();
        s.sum.add(value);
        s.squares.add(value * value);
        // Written only when they move, so concurrent recorders do not contend on them.
        if (value < Double.longBitsToDouble(s.min.get())) {
            s.min.accumulateAndGet(Double.doubleToLongBits(value), (a, b) -> Double.longBitsToDouble(b) < Double.longBitsToDouble(a) ? b : a);
        }
        if (value > Double.longBitsToDouble(s.max.get())) {
            s.max.accumulateAndGet(Double.doubleToLongBits(value), (a, b) -> Double.longBitsToDouble(b) > Double.longBitsToDouble(a) ? b : a);
        }
    }

    /** Bucket 0 holds values below 0.001; then each doubling from 0.001 has 2^SUB_BITS, each from its lower bound to below its upper one. */
    static int bucket(double value) {
        double v = value * 1000;
        if (!(v >= 1)) return 0;
        int sub = (int) (Double.doubleToRawLongBits(v) >>> (52 - SUB_BITS)) & ((1 << SUB_BITS) - 1);
        return Math.min(BUCKETS - 1, 1 + (Math.getExponent(v) << SUB_BITS) + sub);
    }

    /** A bucket's upper bound (the next one's lower). */
    static double upper(int bucket) {
        if (bucket == 0) return 0.001;
        int exponent = (bucket - 1) >> SUB_BITS;
        int sub = (bucket - 1) & ((1 << SUB_BITS) - 1);
        return Math.scalb(1 + (sub + 1) / (double) (1 << SUB_BITS), exponent) / 1000;
    }

    /**
     * The figures of the current and the previous window, as CouchDB shows them (min and max 0
     * when nothing was recorded). {@code bins} holds [upper bound, count] of each bucket that counted.
     */
    public record Snapshot(long n, double min, double max, double mean, double median, double variance, double[][] percentiles,
                           List<double[]> bins) {}

    public Snapshot snapshot() {
        long e = epoch();
        long[] counts = new long[BUCKETS];
        long n = 0;
        double sum = 0;
        double squares = 0;
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (Slot s : slots) {
            if (s.epoch != e && s.epoch != e - 1) continue;
            for (int i = 0; i < BUCKETS; i++) counts[i] += s.buckets.get(i);
            n += s.n.sum();
            sum += s.sum.sum();
            squares += s.squares.sum();
            min = Math.min(min, Double.longBitsToDouble(s.min.get()));
            max = Math.max(max, Double.longBitsToDouble(s.max.get()));
        }
        if (n == 0) return new Snapshot(0, 0, 0, 0, 0, 0, percentiles(counts, 0, 0, 0), List.of());
        double mean = sum / n;
        double variance = n > 1 ? Math.max(0, (squares - n * mean * mean) / (n - 1)) : 0;
        double[][] p = percentiles(counts, n, min, max);
        List<double[]> bins = new ArrayList<>();
        for (int i = 0; i < BUCKETS; i++) if (counts[i] > 0) bins.add(new double[] {upper(i), counts[i]});
        return new Snapshot(n, min, max, mean, p[0][1], variance, p, bins);
    }

    /** Each of {@link #PERCENTILES} as [name, value]: the upper bound of its bucket, kept within the minimum and maximum. */
    private static double[][] percentiles(long[] counts, long n, double min, double max) {
        double[][] out = new double[PERCENTILES.length][];
        for (int k = 0; k < PERCENTILES.length; k++) {
            double q = PERCENTILES[k] == 999 ? 0.999 : PERCENTILES[k] / 100.0;
            double v = 0;
            if (n > 0) {
                long rank = Math.max(1, (long) Math.ceil(q * n));
                long seen = 0;
                for (int i = 0; i < counts.length; i++) {
                    seen += counts[i];
                    if (seen >= rank) {
                        v = Math.min(max, Math.max(min, upper(i)));
                        break;
                    }
                }
            }
            out[k] = new double[] {PERCENTILES[k], v};
        }
        return out;
    }

    @Override
    public String path() {
        return path;
    }

    @Override
    public String label() {
        return null;
    }

    @Override
    public String desc() {
        return desc;
    }

    @Override
    public Stats.Type type() {
        return Stats.Type.HISTOGRAM;
    }
}
