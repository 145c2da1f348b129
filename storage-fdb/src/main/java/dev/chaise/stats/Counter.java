package dev.chaise.stats;

import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/** A count since the server started: counted here ({@link #increment}), or read from where it is kept. */
public final class Counter implements Stats.Metric {
    private final String path;
    private final String label;
    private final String desc;
    private final LongAdder adder = new LongAdder();
    private final LongSupplier read;

    Counter(String path, String label, String desc, LongSupplier read) {
        this.path = path;
        this.label = label;
        this.desc = desc;
        this.read = read;
    }

    public void increment() {
        adder.increment();
    }

    public void add(long n) {
        adder.add(n);
    }

    public long value() {
        return read != null ? read.getAsLong() : adder.sum();
    }

    @Override
    public String path() {
        return path;
    }

    @Override
    public String label() {
        return label;
    }

    @Override
    public String desc() {
        return desc;
    }

    @Override
    public Stats.Type type() {
        return Stats.Type.COUNTER;
    }
}
