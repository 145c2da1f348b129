package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.Versionstamps;
import java.util.ArrayList;
import java.util.List;

/**
 * The purge history, CouchDB's purge infos: one record per purged document, in purge order, so
 * that what was purged can be listed ({@code _purged_infos}) and its sequence reported
 * ({@code purge_seq}); at most {@code purged_infos_limit} records are kept.
 *
 * <pre>
 * (1, DbId, 10 PURGES)
 * ├── 0 PURGE_LIMIT = (Limit)                                          purged_infos_limit; 1000 when absent
 * ├── 1 PURGE_COUNT = int64 LE                                         records kept (atomic adds)
 * └── 2 PURGE_INFO, Incarnation, Versionstamp = (DocID, ((RevPos, RevHash)...))   the revisions asked for
 * </pre>
 *
 * A record's key is versionstamped, so concurrent purges never conflict on it and its order is
 * the order of the commits; its Sequence is the database's {@code purge_seq}.
 */
public final class PurgedInfos {
    /** CouchDB's default {@code purged_infos_limit}. */
    public static final int DEFAULT_LIMIT = 1000;

    /** One record: the document and the revisions a purge asked to remove. */
    public record Info(Sequence seq, String id, List<RevId> revs) {}

    private PurgedInfos() {}

    private static byte[] limitKey(DbHandle db) {
        return db.space().pack(KeySpace.Db.PURGES, KeySpace.Purges.PURGE_LIMIT);
    }

    private static byte[] countKey(DbHandle db) {
        return db.space().pack(KeySpace.Db.PURGES, KeySpace.Purges.PURGE_COUNT);
    }

    static byte[][] range(DbHandle db) {
        return db.space().range(KeySpace.Db.PURGES, KeySpace.Purges.PURGE_INFO);
    }

    static int limit(ReadTransaction tx, DbHandle db) {
        byte[] v = tx.get(limitKey(db));
        return v == null ? DEFAULT_LIMIT : (int) Tuple.fromBytes(v).getLong(0);
    }

    static void setLimit(Transaction tx, DbHandle db, int limit) {
        tx.set(limitKey(db), Tuple.from((long) limit).pack());
    }

    /** Appends a record with this commit's versionstamp (user version {@code userVersion}). */
    static void add(Transaction tx, DbHandle db, String docId, List<RevId> revs, int userVersion) {
        List<Object> rs = new ArrayList<>(revs.size());
        for (RevId r : revs) rs.add(Tuple.from(r.pos(), r.hashBytes()));
        Tuple k = Tuple.from(KeySpace.Db.PURGES, KeySpace.Purges.PURGE_INFO, (long) db.incarnation(), Versionstamp.incomplete(userVersion));
        tx.setVersionstampedKey(Versionstamps.packWithVersionstamp(db.space().prefix(), k), Tuple.from(docId, Tuple.fromList(rs)).pack());
    }

    /**
     * After {@code added} new records, drops the oldest beyond {@code limit}. Reads the count
     * (so concurrent purges of one database conflict here, which keeps the count exact); purges
     * are rare administrative acts.
     */
    static void trim(Transaction tx, DbHandle db, int added, int limit) {
        byte[] v = tx.get(countKey(db));
        long kept = (v == null ? 0 : DbStats.littleEndianValue(v)) + added;
        long drop = Math.max(0, kept - limit);
        long dropped = 0;
        if (drop > 0) {
            byte[][] r = range(db);
            for (KeyValue kv : tx.getRangeAsList(r[0], r[1], (int) Math.min(drop, Integer.MAX_VALUE), false)) {
                tx.clear(kv.key());
                dropped++;
            }
        }
        long delta = added - dropped;
        if (delta != 0) tx.mutate(MutationType.ADD, countKey(db), DbStats.littleEndian(delta));
    }

    /** Every record kept, oldest first. */
    static List<Info> list(ReadTransaction tx, DbHandle db) {
        byte[][] r = range(db);
        List<Info> out = new ArrayList<>();
        for (KeyValue kv : tx.getRangeAsList(r[0], r[1], 0, false)) out.add(decode(db, kv));
        return out;
    }

    static Info decode(DbHandle db, KeyValue kv) {
        Tuple k = db.space().unpack(kv.key());
        Tuple v = Tuple.fromBytes(kv.value());
        Tuple rs = v.getNestedTuple(1);
        List<RevId> revs = new ArrayList<>(rs.size());
        for (int i = 0; i < rs.size(); i++) revs.add(RevId.fromKey(rs.getNestedTuple(i).getLong(0), rs.getNestedTuple(i).getBytes(1)));
        return new Info(new Sequence((int) k.getLong(2), k.getVersionstamp(3)), v.getString(0), revs);
    }

    /** The last record's sequence: the database's {@code purge_seq}, or null if nothing was ever purged (or kept). */
    static Sequence lastSequence(ReadTransaction tx, DbHandle db) {
        byte[][] r = range(db);
        // A read bounded by the records' range: a key selector would walk back over whatever
        // precedes it when there is none, such as the tombstones index writers leave at the end
        // of the views subspace (every batch reads this), and conflict with all of it.
        List<KeyValue> last = tx.getRangeAsList(r[0], r[1], 1, true);
        if (last.isEmpty()) return null;
        Tuple t = db.space().unpack(last.getFirst().key());
        return new Sequence((int) t.getLong(2), t.getVersionstamp(3));
    }
}
