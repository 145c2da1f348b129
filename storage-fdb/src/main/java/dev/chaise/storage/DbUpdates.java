package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.Versionstamps;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CouchDB's {@code _db_updates}: databases created, updated and deleted, in commit order, from a
 * versionstamped subspace, as RFC D keeps a database's changes. As in CouchDB, whose feed is the
 * changes of {@code _global_changes} with one document per event type and database
 * ({@code created:a}, {@code updated:a}, ...), each (database, type) pair has one row, at the
 * versionstamp of its last event: creating {@code a}, writing to it, creating {@code b} and
 * deleting {@code b} is four rows, and the feed stays at most three times as long as the list of
 * names.
 *
 * <pre>
 * (0 SYSTEM, "dbupdates")
 * ├── 0 FEED, Versionstamp = (DbName, Type)       Type: "created" | "updated" | "deleted"
 * ├── 1 LAST_ROW, DbName, Type = (Versionstamp)  where the pair's row is, to move it
 * └── 2 BUMP = int64 LE                          added to with every row; live feeds watch it
 * </pre>
 *
 * Creations and deletions are written in the transaction that does them. Document writes only
 * mark their database; every {@link #FLUSH_MILLIS} one transaction moves the marked databases'
 * rows to the end as {@code updated}, so writers never contend on these keys. As in CouchDB,
 * whose {@code _global_changes} batches its events, an {@code updated} event may come a moment
 * after the write, and one for writes just before a crash may be lost; creations and deletions
 * never are.
 */
final class DbUpdates implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DbUpdates.class);
    static final long FLUSH_MILLIS = 500;
    static final String CREATED = "created";
    static final String UPDATED = "updated";
    static final String DELETED = "deleted";

    /** One event as the feed shows it. */
    record Event(String dbName, String type, Versionstamp seq) {}

    private final KvStore kv;
    private final Set<String> marked = ConcurrentHashMap.newKeySet();
    private final Thread flusher;
    private volatile boolean running = true;

    DbUpdates(KvStore kv) {
        this.kv = kv;
        this.flusher = Thread.ofVirtual().name("chaise-db-updates").start(this::flushLoop);
    }

    private static byte[] key(Object... items) {
        return Tuple.fromList(prefix(items)).pack();
    }

    private static List<Object> prefix(Object... items) {
        List<Object> l = new ArrayList<>(List.of(KeySpace.SYSTEM, KeySpace.DB_UPDATES));
        l.addAll(List.of(items));
        return l;
    }

    static byte[][] feedRange() {
        byte[] p = key(KeySpace.Updates.FEED);
        return new byte[][] {Keys.concat(p, new byte[] {0x00}), Keys.concat(p, new byte[] {(byte) 0xff})};
    }

    /** What a cursor's continuations over the feed are relative to: they are then a versionstamp. */
    static byte[] feedPrefix() {
        return key(KeySpace.Updates.FEED);
    }

    static byte[] bumpKey() {
        return key(KeySpace.Updates.BUMP);
    }

    /**
     * Records an event in {@code tx}: the old row of the same database and type goes, a new one is
     * stamped at this commit. {@code userVersion} orders several events of one transaction.
     */
    static void record(Transaction tx, String dbName, String type, int userVersion) {
        byte[] legacy = key(KeySpace.Updates.LAST_ROW, dbName); // a store written when rows were per database only
        byte[] was = tx.get(legacy);
        if (was != null) {
            tx.clear(key(KeySpace.Updates.FEED, Tuple.fromBytes(was).getVersionstamp(0)));
            tx.clear(legacy);
        }
        byte[] pointer = key(KeySpace.Updates.LAST_ROW, dbName, type);
        byte[] old = tx.get(pointer);
        if (old != null) tx.clear(key(KeySpace.Updates.FEED, Tuple.fromBytes(old).getVersionstamp(0)));
        Tuple row = Tuple.fromList(prefix(KeySpace.Updates.FEED, Versionstamp.incomplete(userVersion)));
        tx.setVersionstampedKey(Versionstamps.packWithVersionstamp(new byte[0], row), Tuple.from(dbName, type).pack());
        tx.setVersionstampedValue(pointer, Versionstamps.packWithVersionstamp(new byte[0], Tuple.from(Versionstamp.incomplete(userVersion))));
        tx.mutate(MutationType.ADD, bumpKey(), ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(1).array());
    }

    static Event decode(KeyValue kv) {
        Tuple k = Tuple.fromBytes(kv.key());
        Tuple v = Tuple.fromBytes(kv.value());
        return new Event(v.getString(0), v.getString(1), k.getVersionstamp(3));
    }

    /** The newest event's versionstamp, or null. */
    static Versionstamp last(ReadTransaction tx) {
        byte[][] r = feedRange();
        List<KeyValue> last = tx.getRangeAsList(r[0], r[1], 1, true);
        return last.isEmpty() ? null : decode(last.getFirst()).seq();
    }

    /** A document of {@code dbName} was written: an {@code updated} event follows within {@link #FLUSH_MILLIS}. */
    void mark(String dbName) {
        marked.add(dbName);
    }

    /** Writes the marked databases' {@code updated} events now; returns how many. */
    int flush() {
        List<String> names = new ArrayList<>(marked);
        if (names.isEmpty()) return 0;
        marked.removeAll(names); // before the transaction: a write marked during it is flushed next time
        try {
            kv.run(tx -> {
                int uv = 0;
                for (String name : names) {
                    if (tx.get(KeySpace.dbEntry(name)) == null) continue; // deleted since: its deleted event stands
                    record(tx, name, UPDATED, uv++);
                }
                return null;
            });
        } catch (RuntimeException e) {
            // Not recorded, or (after a 1021) maybe: the next flush moves the rows again, which is harmless.
            marked.addAll(names);
            throw e;
        }
        return names.size();
    }

    private void flushLoop() {
        while (running) {
            try {
                Thread.sleep(FLUSH_MILLIS);
                flush();
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (running) log.warn("recording database updates failed; will retry", e);
            }
        }
    }

    @Override
    public void close() {
        running = false;
        flusher.interrupt();
        try {
            flusher.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            flush(); // what was marked before the stop
        } catch (RuntimeException e) {
            log.debug("the last database updates were not recorded", e);
        }
    }
}
