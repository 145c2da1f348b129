package dev.chaise.kv.embedded;

import dev.chaise.kv.Keys;
import dev.chaise.kv.MutationType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A transaction's uncommitted writes, kept so reads see them (read-your-writes) and so the
 * sequencer can apply them: first the cleared ranges, then the point operations, then the
 * versionstamped writes. A point write made before a range clear is dropped by the clear, so
 * that order reproduces the transaction's own order.
 */
final class WriteBuffer {

    sealed interface Op permits SetOp, ClearOp, AtomicOp {}

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

    record Mutation(MutationType type, byte[] param) {}

    /** {@code writeConflict}: for a stamped key, whether the resolved key is a write-conflict range. */
    record VersionstampedWrite(byte[] key, byte[] value, boolean stampInKey, boolean writeConflict) {}

    final TreeMap<byte[], Op> points = new TreeMap<>(Keys::compare);
    /** Disjoint, coalesced cleared ranges: begin to end. */
    final TreeMap<byte[], byte[]> cleared = new TreeMap<>(Keys::compare);
    final List<VersionstampedWrite> versionstamped = new ArrayList<>();

    void set(byte[] key, byte[] value) {
        points.put(key, new SetOp(value));
    }

    void clear(byte[] key) {
        points.put(key, ClearOp.INSTANCE);
    }

    void clear(byte[] begin, byte[] end) {
        if (Keys.compare(begin, end) >= 0) return;
        points.subMap(begin, true, end, false).clear();
        byte[] b = begin, e = end;
        Map.Entry<byte[], byte[]> before = cleared.floorEntry(b);
        if (before != null && Keys.compare(before.getValue(), b) >= 0) {
            b = before.getKey();
            if (Keys.compare(before.getValue(), e) > 0) e = before.getValue();
        }
        // Absorb every range that starts inside [b, e].
        Map.Entry<byte[], byte[]> next;
        while ((next = cleared.ceilingEntry(b)) != null && Keys.compare(next.getKey(), e) <= 0) {
            if (Keys.compare(next.getValue(), e) > 0) e = next.getValue();
            cleared.remove(next.getKey());
        }
        cleared.put(b, e);
    }

    void mutate(MutationType type, byte[] key, byte[] param) {
        Op existing = points.get(key);
        Mutation m = new Mutation(type, param);
        if (existing instanceof SetOp s) {
            put(key, Atomics.apply(type, s.value(), param));
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
            points.put(key, new AtomicOp(ms));
        }
    }

    private void put(byte[] key, byte[] valueOrNull) {
        points.put(key, valueOrNull == null ? ClearOp.INSTANCE : new SetOp(valueOrNull));
    }

    boolean isCleared(byte[] key) {
        Map.Entry<byte[], byte[]> e = cleared.floorEntry(key);
        return e != null && Keys.compare(key, e.getValue()) < 0;
    }

    boolean isEmpty() {
        return points.isEmpty() && cleared.isEmpty() && versionstamped.isEmpty();
    }
}
