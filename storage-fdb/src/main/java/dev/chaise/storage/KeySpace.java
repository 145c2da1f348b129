package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import dev.chaise.kv.Keys;

/**
 * The whole key space of one Chaise deployment. Every key is tuple-encoded; the first element
 * says whose it is.
 *
 * <pre>
 * /
 * ├── (0, "dbs", DbName) = (DbId, MetaStamp)            DatabaseDirectory: name to id, and a stamp
 * │                                                     changed by every metadata edit (cache check)
 * ├── (0, "dbid") = last DbId                           DatabaseDirectory: the id allocator
 * ├── (0, "txids", TxId) = (Result, WallClockMillis)    TxIds: RFC D's commit_unknown_result guard
 * ├── (0, "server", Name) = (String)                    ServerMetadata: the server uuid, the cookie secret
 * ├── (1, DbId, Sub, ...)                               one database: see {@link DatabaseSubspace}
 * └── (2, JobType, ...)                                 the background job queue (views' JobQueue)
 * </pre>
 *
 * A database's id is never reused, so a deleted and re-created database never sees the old
 * one's keys, and a stale cached handle can only fail its check.
 */
public final class KeySpace {
    static final long SYSTEM = 0;
    static final long DATABASES = 1;
    static final long JOBS = 2;

    private KeySpace() {}

    static byte[] dbEntry(String name) {
        return Tuple.from(SYSTEM, "dbs", name).pack();
    }

    static byte[] dbEntriesBegin() {
        return Keys.concat(Tuple.from(SYSTEM, "dbs").pack(), new byte[] {0x00});
    }

    static byte[] dbEntriesEnd() {
        return Keys.concat(Tuple.from(SYSTEM, "dbs").pack(), new byte[] {(byte) 0xff});
    }

    static byte[] dbIdCounter() {
        return Tuple.from(SYSTEM, "dbid").pack();
    }

    static byte[] txIds() {
        return Tuple.from(SYSTEM, "txids").pack();
    }

    static byte[] serverValue(String name) {
        return Tuple.from(SYSTEM, "server", name).pack();
    }

    /** The job queue's root, {@code (2)}: owned by the views module's {@code JobQueue}, which draws its layout. */
    public static byte[] jobsPrefix() {
        return Tuple.from(JOBS).pack();
    }

    static byte[] databasePrefix(long dbId) {
        return Tuple.from(DATABASES, dbId).pack();
    }
}
