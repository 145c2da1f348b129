package dev.chaise.storage;

import dev.chaise.kv.KeyValue;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;

/**
 * RFC B's counters again, per partition of a partitioned database: added to by the same atomic
 * ADDs, in the same transactions, as the database's own ({@link DbStats.Deltas}), so
 * {@code GET /{db}/_partition/{p}} reads four keys and never scans.
 *
 * <pre>
 * (1, DbId, 13 PARTITIONS, Partition, "doc_count")      = int64 LE   live documents of the partition
 *                                     "doc_del_count"  = int64 LE   its deleted documents
 *                                     "size_external"  = int64 LE   JSON bytes of its stored leaf revisions
 *                                     "size_active"    = int64 LE   KV bytes of its stored leaf revisions
 * </pre>
 *
 * A partition nobody wrote to has no keys and reads as zeros, as CouchDB answers for it.
 */
public final class PartitionStats {
    private PartitionStats() {}

    static void add(Transaction tx, DbHandle db, String partition, DbStats.Counter c, long delta) {
        if (delta == 0) return;
        tx.nextWriteNoWriteConflictRange(); // read only by snapshot, so no reader can conflict
        tx.mutate(MutationType.ADD, key(db, partition, c), DbStats.littleEndian(delta));
    }

    /** A partition's counters ({@code doc_count}, ...) in one range read; pass a snapshot transaction not to conflict with writers. */
    public static DbStats.Snapshot read(ReadTransaction tx, DbHandle db, String partition) {
        byte[][] r = db.space().range(KeySpace.Db.PARTITIONS, partition);
        long[] v = new long[DbStats.Counter.values().length];
        for (KeyValue kv : tx.getRangeAsList(r[0], r[1], 0, false)) {
            String name = db.space().unpack(kv.key()).getString(2);
            for (DbStats.Counter c : DbStats.Counter.values()) if (c.key.equals(name)) v[c.ordinal()] = DbStats.littleEndianValue(kv.value());
        }
        return new DbStats.Snapshot(v[DbStats.Counter.DOC_COUNT.ordinal()], v[DbStats.Counter.DOC_DEL_COUNT.ordinal()],
                v[DbStats.Counter.SIZE_EXTERNAL.ordinal()], v[DbStats.Counter.SIZE_ACTIVE.ordinal()]);
    }

    static byte[] key(DbHandle db, String partition, DbStats.Counter c) {
        return db.space().pack(KeySpace.Db.PARTITIONS, partition, c.key);
    }
}
