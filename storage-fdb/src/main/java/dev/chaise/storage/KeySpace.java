package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import dev.chaise.kv.Keys;

/**
 * Every subspace tag of a Chaise deployment, in one place, as CouchDB on FoundationDB keeps them in
 * one header ({@code fabric2.hrl}). Every key is tuple-encoded; the first element says whose it
 * is. The classes that own each subspace encode their keys from these tags and draw their own part
 * of the tree; {@code docs/key-layout.md} draws the whole, and {@code KeyLayoutDocTest} holds it to
 * these constants.
 *
 * <pre>
 * /
 * ├── (0 SYSTEM, "dbs", DbName) = (DbId, MetaStamp)       DatabaseDirectory
 * ├── (0 SYSTEM, "dbid") = last DbId                      DatabaseDirectory
 * ├── (0 SYSTEM, "txids", TxId) = (Result, Millis)         TxIds: RFC D's commit_unknown_result guard
 * ├── (0 SYSTEM, "server", Name) = (String)                ServerMetadata
 * ├── (0 SYSTEM, "dbupdates", {@link Updates}...)           DbUpdates: _db_updates
 * ├── (1 DATABASES, DbId, {@link Db}...)                    one database: {@link DatabaseSubspace}
 * └── (2 JOBS, JobType, {@link Jobs}...)                    the background job queue (views' JobQueue)
 * </pre>
 *
 * A database's id is never reused, so a deleted and re-created database never sees the old
 * one's keys, and a stale cached handle can only fail its check.
 */
public final class KeySpace {
    public static final long SYSTEM = 0;
    public static final long DATABASES = 1;
    public static final long JOBS = 2;

    /** Names under {@link #SYSTEM}. */
    public static final String DBS = "dbs";
    public static final String DBID = "dbid";
    public static final String TXIDS = "txids";
    public static final String SERVER = "server";
    public static final String DB_UPDATES = "dbupdates";

    private KeySpace() {}

    /** Under {@code (1 DATABASES, DbId)}: one subspace per RFC, each with its owning class. */
    public static final class Db {
        public static final long META = 0;
        public static final long DOCS = 1;
        public static final long REVISIONS = 2;
        public static final long BY_ID = 3;
        public static final long CHANGES = 4;
        public static final long STATS = 5;
        public static final long LOCAL = 6;
        public static final long VIEWS = 7;
        public static final long ATTACHMENTS = 8;
        public static final long UPLOADS = 9;
        public static final long PURGES = 10;
        public static final long SEARCH = 11;
        public static final long ACCESS = 12;
        public static final long PARTITIONS = 13;

        private Db() {}
    }

    /** Under {@code (…, 12 ACCESS)}: a per-document access database's listings by principal ({@link AccessIndex}). */
    public static final class Access {
        public static final long ACCESS_DOC = 0;
        public static final long ACCESS_BY_ID = 1;
        public static final long ACCESS_BY_SEQ = 2;

        private Access() {}
    }

    /** Under {@code (…, 10 PURGES)}: the purge history ({@link PurgedInfos}). */
    public static final class Purges {
        public static final long PURGE_LIMIT = 0;
        public static final long PURGE_COUNT = 1;
        public static final long PURGE_INFO = 2;

        private Purges() {}
    }

    /** Under {@code (…, 11 SEARCH, Sig)}: one Nouveau index's Lucene files (views' {@code SearchSubspace}). */
    public static final class Search {
        public static final long FILES = 0;
        public static final long BLOCKS = 1;

        private Search() {}
    }

    /** Under {@code (…, 7 VIEWS)}: RFC E's map indexes (views' {@code MapIndexSubspace}). */
    public static final class Views {
        public static final long INFO = 0;
        public static final long DATA = 1;

        private Views() {}
    }

    /** Under {@code (…, 7 VIEWS, 0 INFO)}: per index and view. */
    public static final class ViewInfo {
        public static final long UPDATE_SEQ = 0;
        public static final long CREATION_VS = 1;
        public static final long BUILD_STATUS = 2;
        public static final long ROW_COUNT = 3;
        public static final long KV_SIZE = 4;
        public static final long DEFINITION = 5;

        private ViewInfo() {}
    }

    /** Under {@code (…, 7 VIEWS, 1 DATA, Sig)}: an index's rows. */
    public static final class ViewData {
        public static final long ID_RANGE = 0;
        public static final long MAP_RANGE = 1;
        public static final long ERRORS = 2;
        // 3 held format 2's per-key aggregates; the reduce tree replaced them (format 3).
        public static final long REDUCE_TREE = 4;

        private ViewData() {}
    }

    /**
     * Under {@code (…, 4 REDUCE_TREE, ViewId)}: the tree's shape; its levels (1, 2, …) follow as
     * plain numbers (views' {@code ReduceTree} draws them).
     */
    public static final class ReduceTree {
        public static final long TREE_META = 0;

        private ReduceTree() {}
    }

    /** Under {@code (0 SYSTEM, "dbupdates")}: {@code _db_updates} ({@link DbUpdates}). */
    public static final class Updates {
        public static final long FEED = 0;
        public static final long LAST_ROW = 1;
        public static final long BUMP = 2;

        private Updates() {}
    }

    /** Under {@code (2 JOBS, JobType)}: the job queue (views' {@code JobQueue}, couch_jobs' design). */
    public static final class Jobs {
        public static final long PENDING = 0;
        public static final long JOB = 1;
        public static final long NOTIFY = 2;

        private Jobs() {}
    }

    static byte[] dbEntry(String name) {
        return Tuple.from(SYSTEM, DBS, name).pack();
    }

    static byte[] dbEntriesBegin() {
        return Keys.concat(Tuple.from(SYSTEM, DBS).pack(), new byte[] {0x00});
    }

    static byte[] dbEntriesEnd() {
        return Keys.concat(Tuple.from(SYSTEM, DBS).pack(), new byte[] {(byte) 0xff});
    }

    static byte[] dbIdCounter() {
        return Tuple.from(SYSTEM, DBID).pack();
    }

    static byte[] txIds() {
        return Tuple.from(SYSTEM, TXIDS).pack();
    }

    static byte[] serverValue(String name) {
        return Tuple.from(SYSTEM, SERVER, name).pack();
    }

    /** The job queue's root, {@code (2)}: owned by the views module's {@code JobQueue}, which draws its layout. */
    public static byte[] jobsPrefix() {
        return Tuple.from(JOBS).pack();
    }

    static byte[] databasePrefix(long dbId) {
        return Tuple.from(DATABASES, dbId).pack();
    }
}
