package dev.chaise.kv.embedded;

import dev.chaise.kv.Keys;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.Versionstamps;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A transaction's uncommitted writes, kept so reads see them (read-your-writes) and so the
 * sequencer can apply them: first the cleared ranges, then the point operations and runs, then
 * the versionstamped keys. A point write made before a range clear is dropped by the clear, so
 * that order reproduces the transaction's own order.
 *
 * <p>Versionstamps, as FDB's read-your-writes layer keeps them: a versionstamped value is a point
 * operation like a set, so a later set, clear or mutation of the key acts on it in order; its key
 * is <b>unreadable</b> (1036 accessed_unreadable) until a clear covers it. A versionstamped key
 * cannot be placed before commit: the range of keys it may become is unreadable, and a later
 * clear covering its lowest possible key drops it.
 *
 * <p>A <b>run</b> is one {@code setAll} of ascending keys kept as two arrays rather than a map
 * entry per key: a document body is a dozen KVs whose span nothing else in the transaction
 * touches, and inserting each into the sorted map was a quarter of a bulk load's writer CPU. A
 * run's span (first to last key) never holds a point operation, another run or a cleared range:
 * a {@code setAll} that would overlap one is stored as separate sets, and a later write inside
 * a run's span first dissolves the run into points.
 */
final class WriteBuffer {

    sealed interface Op permits SetOp, ClearOp, AtomicOp, StampedOp {}

    record SetOp(byte[] value) implements Op {}

    enum ClearOp implements Op { INSTANCE }

    /** Atomic mutations on a key whose base value is not known to this transaction. */
    record AtomicOp(List<Mutation> mutations) implements Op {
        byte[] applyTo(byte[] base) {
            byte[] v = base;
            for (Mutation m : mutations) v = Atomics.apply(m.type(), v, m.param());
            return v;
        }
    }

    /** A versionstamped value ({@code template}: placeholder and trailing offset), then mutations made on it since. */
    record StampedOp(byte[] template, List<Mutation> then) implements Op {
        byte[] valueFor(byte[] stamp) {
            byte[] v = Versionstamps.fill(template, stamp);
            for (Mutation m : then) v = Atomics.apply(m.type(), v, m.param());
            return v;
        }
    }

    record Mutation(MutationType type, byte[] param) {}

    /**
     * A versionstamped key: {@code lowest} is the key it takes with the lowest stamp it can get,
     * where FDB keeps it (a clear covering it drops it); {@code writeConflict}: whether the resolved
     * key is a write-conflict range.
     */
    record VersionstampedKey(byte[] key, byte[] value, byte[] lowest, boolean writeConflict) {}

    /** A run's keys, ascending and distinct, and their values. */
    record Run(byte[][] keys, byte[][] values) {
        byte[] last() {
            return keys[keys.length - 1];
        }

        /** The index of {@code key}, or {@code -(insertion point) - 1}. */
        int find(byte[] key) {
            return java.util.Arrays.binarySearch(keys, key, Keys::compare);
        }
    }

    /** Runs shorter than this are stored as points: not worth a second structure. */
    static final int MIN_RUN = 4;

    final TreeMap<byte[], Op> points = new TreeMap<>(Keys::compare);
    /** Runs by first key. */
    final TreeMap<byte[], Run> runs = new TreeMap<>(Keys::compare);
    /** Disjoint, coalesced cleared ranges: begin to end. */
    final TreeMap<byte[], byte[]> cleared = new TreeMap<>(Keys::compare);
    final List<VersionstampedKey> versionstamped = new ArrayList<>();
    /** Disjoint, coalesced ranges this transaction may not read (1036): begin to end; read it through {@link #unreadable()}. */
    private final TreeMap<byte[], byte[]> unreadable = new TreeMap<>(Keys::compare);
    /**
     * Ranges made unreadable since {@link #unreadable} was last needed, merged into it then: a
     * bulk write reads first and then writes a versionstamped value and key per document, and
     * merging each into the map as it came (four to six searches of it) was a sixth of its
     * writer's CPU; most such transactions never read again before they commit.
     */
    private final ArrayList<byte[][]> unreadableToMerge = new ArrayList<>();
    /**
     * Bounds (inclusive; null while empty) of every key ever put in {@link #points} and every
     * run's span: a write outside them needs no search of that map. A bulk write puts a body run
     * (RFC A's subspace) and two points (RFC C's and B's, above it) per document, with ids
     * ascending, so most searches that look for an overlap end here; a third of the buffer's
     * searches were these. Never narrowed when something is removed: bounds that are too wide
     * only send a write to the search.
     */
    private byte[] pointsLow;
    private byte[] pointsHigh;
    private byte[] runsLow;
    private byte[] runsHigh;

    void set(byte[] key, byte[] value) {
        dissolve(key, key);
        putPoint(key, new SetOp(value));
    }

    private void putPoint(byte[] key, Op op) {
        points.put(key, op);
        if (pointsLow == null || Keys.compare(key, pointsLow) < 0) pointsLow = key;
        if (pointsHigh == null || Keys.compare(key, pointsHigh) > 0) pointsHigh = key;
    }

    /** Keys ascending and distinct (the caller checked). */
    void setAll(byte[][] keys, byte[][] values) {
        if (keys.length < MIN_RUN || overlaps(keys[0], keys[keys.length - 1])) {
            for (int i = 0; i < keys.length; i++) set(keys[i], values[i]);
            return;
        }
        runs.put(keys[0], new Run(keys, values));
        if (runsLow == null || Keys.compare(keys[0], runsLow) < 0) runsLow = keys[0];
        byte[] last = keys[keys.length - 1];
        if (runsHigh == null || Keys.compare(last, runsHigh) > 0) runsHigh = last;
    }

    /** Whether {@code [first, last]} meets {@code [low, high]}; false if that is null (nothing there). */
    private static boolean within(byte[] first, byte[] last, byte[] low, byte[] high) {
        return low != null && Keys.compare(last, low) >= 0 && Keys.compare(first, high) <= 0;
    }

    /** Whether any write of this buffer lies in {@code [first, last]}. */
    private boolean overlaps(byte[] first, byte[] last) {
        if (within(first, last, pointsLow, pointsHigh)) {
            byte[] p = points.ceilingKey(first);
            if (p != null && Keys.compare(p, last) <= 0) return true;
        }
        if (within(first, last, runsLow, runsHigh)) {
            Map.Entry<byte[], Run> r = runs.floorEntry(last);
            if (r != null && Keys.compare(r.getValue().last(), first) >= 0) return true;
        }
        Map.Entry<byte[], byte[]> c = cleared.floorEntry(last);
        return c != null && Keys.compare(c.getValue(), first) > 0;
    }

    /** Turns every run whose span meets {@code [from, to]} back into points, so the write about to be made there lands among them. */
    private void dissolve(byte[] from, byte[] to) {
        if (runs.isEmpty() || !within(from, to, runsLow, runsHigh)) return;
        Map.Entry<byte[], Run> r;
        while ((r = runs.floorEntry(to)) != null && Keys.compare(r.getValue().last(), from) >= 0) {
            runs.remove(r.getKey());
            Run run = r.getValue();
            for (int i = 0; i < run.keys().length; i++) putPoint(run.keys()[i], new SetOp(run.values()[i]));
        }
    }

    /** The operation on {@code key}, points and runs alike; null if none. */
    Op op(byte[] key) {
        Op op = points.get(key);
        if (op != null || runs.isEmpty()) return op;
        Map.Entry<byte[], Run> r = runs.floorEntry(key);
        if (r == null) return null;
        int i = r.getValue().find(key);
        return i >= 0 ? new SetOp(r.getValue().values()[i]) : null;
    }

    /** Whether this buffer writes {@code key}: a point operation, a run's key or a cleared range (versionstamped keys get theirs at commit). */
    boolean touches(byte[] key) {
        return op(key) != null || isCleared(key);
    }

    /** The point operations and run entries in {@code [begin, end)}, as one sorted map (a copy: later writes do not change it). */
    TreeMap<byte[], Op> snapshotOf(byte[] begin, byte[] end) {
        TreeMap<byte[], Op> out = new TreeMap<>(points.subMap(begin, true, end, false));
        if (runs.isEmpty()) return out;
        Map.Entry<byte[], Run> first = runs.floorEntry(begin);
        for (Run run : (first != null ? runs.tailMap(first.getKey(), true) : runs).values()) {
            if (Keys.compare(run.keys()[0], end) >= 0) break;
            int i = run.find(begin);
            for (i = i >= 0 ? i : -i - 1; i < run.keys().length && Keys.compare(run.keys()[i], end) < 0; i++) {
                out.put(run.keys()[i], new SetOp(run.values()[i]));
            }
        }
        return out;
    }

    void clear(byte[] key) {
        dissolve(key, key);
        putPoint(key, ClearOp.INSTANCE);
        if (!unreadable().isEmpty()) subtract(unreadable, key, Keys.keyAfter(key));
    }

    void clear(byte[] begin, byte[] end) {
        if (Keys.compare(begin, end) >= 0) return;
        dissolve(begin, end); // a run ending exactly at end is dissolved too: harmless
        points.subMap(begin, true, end, false).clear();
        add(cleared, begin, end);
        if (!unreadable().isEmpty()) subtract(unreadable, begin, end);
        versionstamped.removeIf(v -> Keys.compare(v.lowest(), begin) >= 0 && Keys.compare(v.lowest(), end) < 0);
    }

    /** A versionstamped value: an operation on the key, which becomes unreadable. */
    void setVersionstampedValue(byte[] key, byte[] template) {
        dissolve(key, key);
        putPoint(key, new StampedOp(template, new ArrayList<>(1)));
        unreadableToMerge.add(new byte[][] {key, Keys.keyAfter(key)});
    }

    /** A versionstamped key, which may become any key of {@code [lowest, end)}: those become unreadable. */
    void setVersionstampedKey(VersionstampedKey v, byte[] end) {
        versionstamped.add(v);
        if (Keys.compare(v.lowest(), end) < 0) unreadableToMerge.add(new byte[][] {v.lowest(), end});
    }

    /** The unreadable ranges, with those waiting merged in. */
    private TreeMap<byte[], byte[]> unreadable() {
        if (!unreadableToMerge.isEmpty()) {
            for (byte[][] r : unreadableToMerge) add(unreadable, r[0], r[1]);
            unreadableToMerge.clear();
        }
        return unreadable;
    }

    /** Adds {@code [begin, end)} to a map of disjoint ranges, merging what it touches. */
    private static void add(TreeMap<byte[], byte[]> ranges, byte[] begin, byte[] end) {
        byte[] b = begin, e = end;
        Map.Entry<byte[], byte[]> before = ranges.floorEntry(b);
        if (before != null && Keys.compare(before.getValue(), b) >= 0) {
            b = before.getKey();
            if (Keys.compare(before.getValue(), e) > 0) e = before.getValue();
        }
        // Absorb every range that starts inside [b, e].
        Map.Entry<byte[], byte[]> next;
        while ((next = ranges.ceilingEntry(b)) != null && Keys.compare(next.getKey(), e) <= 0) {
            if (Keys.compare(next.getValue(), e) > 0) e = next.getValue();
            ranges.remove(next.getKey());
        }
        ranges.put(b, e);
    }

    /** Removes {@code [begin, end)} from a map of disjoint ranges, keeping what lies outside it. */
    private static void subtract(TreeMap<byte[], byte[]> ranges, byte[] begin, byte[] end) {
        Map.Entry<byte[], byte[]> before = ranges.lowerEntry(begin);
        if (before != null && Keys.compare(before.getValue(), begin) > 0) {
            ranges.put(before.getKey(), begin);
            if (Keys.compare(before.getValue(), end) > 0) ranges.put(end, before.getValue());
        }
        Map.Entry<byte[], byte[]> in;
        while ((in = ranges.ceilingEntry(begin)) != null && Keys.compare(in.getKey(), end) < 0) {
            ranges.remove(in.getKey());
            if (Keys.compare(in.getValue(), end) > 0) ranges.put(end, in.getValue());
        }
    }

    boolean isUnreadable(byte[] key) {
        return inRanges(unreadable(), key);
    }

    /** The unreadable ranges meeting {@code [begin, end)}, clipped to it (a copy: later writes do not change it). */
    TreeMap<byte[], byte[]> unreadableIn(byte[] begin, byte[] end) {
        TreeMap<byte[], byte[]> out = new TreeMap<>(Keys::compare);
        if (unreadable().isEmpty()) return out;
        Map.Entry<byte[], byte[]> first = unreadable.lowerEntry(begin);
        if (first != null && Keys.compare(first.getValue(), begin) > 0) out.put(begin, min(first.getValue(), end));
        for (Map.Entry<byte[], byte[]> r : unreadable.subMap(begin, true, end, false).entrySet()) out.put(r.getKey(), min(r.getValue(), end));
        return out;
    }

    private static byte[] min(byte[] a, byte[] b) {
        return Keys.compare(a, b) <= 0 ? a : b;
    }

    private static boolean inRanges(TreeMap<byte[], byte[]> ranges, byte[] key) {
        Map.Entry<byte[], byte[]> e = ranges.floorEntry(key);
        return e != null && Keys.compare(key, e.getValue()) < 0;
    }

    void mutate(MutationType type, byte[] key, byte[] param) {
        dissolve(key, key);
        Op existing = points.get(key);
        Mutation m = new Mutation(type, param);
        if (existing instanceof SetOp s) {
            put(key, Atomics.apply(type, s.value(), param));
        } else if (existing instanceof StampedOp st) {
            st.then().add(m); // applied to the stamped value at commit, as FDB applies its mutations in order
        } else if (existing == ClearOp.INSTANCE || (existing == null && isCleared(key))) {
            put(key, Atomics.apply(type, null, param));
        } else if (existing instanceof AtomicOp a) {
            Mutation last = a.mutations().getLast();
            if (type == MutationType.ADD && last.type() == MutationType.ADD && last.param().length == param.length) {
                // Same-width adds compose: (x + a) + b == x + (a + b), both truncated to the width.
                a.mutations().set(a.mutations().size() - 1, new Mutation(MutationType.ADD, Atomics.apply(MutationType.ADD, last.param(), param)));
            } else {
                a.mutations().add(m);
            }
        } else {
            List<Mutation> ms = new ArrayList<>(2);
            ms.add(m);
            putPoint(key, new AtomicOp(ms));
        }
    }

    private void put(byte[] key, byte[] valueOrNull) {
        putPoint(key, valueOrNull == null ? ClearOp.INSTANCE : new SetOp(valueOrNull));
    }

    boolean isCleared(byte[] key) {
        return inRanges(cleared, key);
    }

    boolean isEmpty() {
        return points.isEmpty() && runs.isEmpty() && cleared.isEmpty() && versionstamped.isEmpty();
    }
}
