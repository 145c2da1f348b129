package dev.chaise.storage;

import dev.chaise.kv.MutationType;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * RFC B's counters, each one key changed only by atomic ADD, so concurrent writers never
 * conflict on them.
 *
 * <pre>
 * (1, DbId, 5 STATS, "doc_count")      = int64 LE   live documents
 *                    "doc_del_count"  = int64 LE   documents whose every branch is deleted
 *                    "size_external"  = int64 LE   JSON bytes of the stored leaf revisions
 *                    "size_active"    = int64 LE   KV bytes of the stored leaf revisions
 *                    "writes"         = int64 LE   document writes; live feeds watch this key
 * </pre>
 */
public final class DbStats {
    public enum Counter {
        DOC_COUNT("doc_count"), DOC_DEL_COUNT("doc_del_count"), SIZE_EXTERNAL("size_external"), SIZE_ACTIVE("size_active"),
        WRITES("writes");

        final String key;

        Counter(String key) {
            this.key = key;
        }
    }

    public record Snapshot(long docCount, long docDelCount, long sizeExternal, long sizeActive) {}

    /**
     * One transaction's changes to the counters, added up per document and written as one atomic
     * add per counter at the end; in a partitioned database each partition's
     * ({@link PartitionStats}) too, in the same transaction.
     */
    static final class Deltas {
        private final long[] db = new long[Counter.values().length];
        private final java.util.Map<String, long[]> partitions = new java.util.HashMap<>();

        void add(DbHandle h, String docId, Counter c, long d) {
            db[c.ordinal()] += d;
            if (!h.partitioned() || c == Counter.WRITES) return;
            String p = Partitions.of(docId);
            if (p != null) partitions.computeIfAbsent(p, k -> new long[Counter.values().length])[c.ordinal()] += d;
        }

        void flush(Transaction tx, DbHandle h) {
            for (Counter c : Counter.values()) DbStats.add(tx, h, c, db[c.ordinal()]);
            partitions.forEach((p, v) -> {
                for (Counter c : Counter.values()) PartitionStats.add(tx, h, p, c, v[c.ordinal()]);
            });
        }
    }

    private DbStats() {}

    public static void add(Transaction tx, DbHandle db, Counter c, long delta) {
        if (delta == 0) return;
        tx.nextWriteNoWriteConflictRange(); // read only by snapshot, so no reader can conflict
        tx.mutate(MutationType.ADD, db.space().pack(KeySpace.Db.STATS, c.key), littleEndian(delta));
    }

    /** Reads the counters without conflicting with writers (a snapshot read). */
    public static Snapshot read(ReadTransaction tx, DbHandle db) {
        return new Snapshot(get(tx, db, Counter.DOC_COUNT), get(tx, db, Counter.DOC_DEL_COUNT),
                get(tx, db, Counter.SIZE_EXTERNAL), get(tx, db, Counter.SIZE_ACTIVE));
    }

    static byte[] key(DbHandle db, Counter c) {
        return db.space().pack(KeySpace.Db.STATS, c.key);
    }

    private static long get(ReadTransaction tx, DbHandle db, Counter c) {
        byte[] v = tx.get(db.space().pack(KeySpace.Db.STATS, c.key));
        return v == null ? 0 : littleEndianValue(v);
    }

    /** The value of a counter an atomic ADD keeps (shorter values are zero-extended, as FDB's ADD reads them). */
    static long littleEndianValue(byte[] v) {
        return ByteBuffer.wrap(java.util.Arrays.copyOf(v, 8)).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    static byte[] littleEndian(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }
}
