package dev.chaise.kv.embedded;

import dev.chaise.kv.Keys;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.Map;
import java.util.TreeMap;

/**
 * The resolver's memory: for the MVCC window, the last version at which each key and key range
 * was written, split into generations of about 100 ms, so expiring old writes drops a whole generation instead
 * of rewriting the map. A transaction conflicts if any range it read was written at a version
 * above its read version. Used only by the leading committer, one at a time; not thread-safe.
 */
final class ConflictHistory {
    private static final long GENERATION_SPAN = 100_000; // versions, about 100 ms: small trees stay in cache

    private static final class Generation {
        /** Single keys written, by key: most writes are these, so each costs one map entry. */
        final TreeMap<byte[], Long> points = new TreeMap<>(Keys::compare);
        /** Range writes as a step function: boundary key to version, valid until the next boundary. */
        final TreeMap<byte[], Long> steps = new TreeMap<>(Keys::compare);
        final long firstVersion;
        long lastVersion;

        Generation(long firstVersion) {
            this.firstVersion = firstVersion;
            steps.put(Keys.EMPTY, 0L);
        }

        void write(byte[] begin, byte[] end, long version) {
            if (isPoint(begin, end)) {
                points.put(begin, version);
            } else {
                long atEnd = steps.floorEntry(end).getValue();
                steps.subMap(begin, true, end, false).clear();
                steps.put(begin, version);
                steps.putIfAbsent(end, atEnd);
            }
            lastVersion = Math.max(lastVersion, version);
        }

        boolean writtenAfter(byte[] begin, byte[] end, long readVersion) {
            if (steps.size() > 1) {
                if (steps.floorEntry(begin).getValue() > readVersion) return true;
                for (long v : steps.subMap(begin, false, end, false).values()) {
                    if (v > readVersion) return true;
                }
            }
            if (isPoint(begin, end)) {
                Long v = points.get(begin);
                return v != null && v > readVersion;
            }
            for (long v : points.subMap(begin, true, end, false).values()) {
                if (v > readVersion) return true;
            }
            return false;
        }
    }

    /** {@code [k, k + \x00)}: exactly one key. */
    static boolean isPoint(byte[] begin, byte[] end) {
        return end.length == begin.length + 1 && end[begin.length] == 0 && Arrays.equals(begin, 0, begin.length, end, 0, begin.length);
    }

    private final Deque<Generation> generations = new ArrayDeque<>(); // oldest first

    void recordWrite(byte[] begin, byte[] end, long version) {
        generationFor(version).write(begin, end, version);
    }

    void recordPoint(byte[] key, long version) {
        Generation g = generationFor(version);
        g.points.put(key, version);
        g.lastVersion = Math.max(g.lastVersion, version);
    }

    private Generation generationFor(long version) {
        Generation g = generations.peekLast();
        if (g == null || version - g.firstVersion >= GENERATION_SPAN) {
            g = new Generation(version);
            generations.addLast(g);
        }
        return g;
    }

    boolean conflicts(byte[] begin, byte[] end, long readVersion) {
        for (var it = generations.descendingIterator(); it.hasNext(); ) {
            Generation g = it.next();
            if (g.lastVersion <= readVersion) break; // older generations are older still
            if (g.writtenAfter(begin, end, readVersion)) return true;
        }
        return false;
    }

    /** Forgets writes no live transaction can conflict with: those at or below {@code oldestReadVersion}. */
    void expire(long oldestReadVersion) {
        while (!generations.isEmpty() && generations.peekFirst().lastVersion <= oldestReadVersion) {
            generations.removeFirst();
        }
    }

    int generationCount() {
        return generations.size();
    }
}
