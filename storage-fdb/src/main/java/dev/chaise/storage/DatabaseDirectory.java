package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.Versionstamps;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Databases by name: creation, deletion, listing, metadata, and a cache of open handles.
 *
 * <pre>
 * (0, "dbs", DbName) = (DbId, MetaStamp)     MetaStamp: versionstamp of the last metadata edit or design document write
 * (0, "dbid") = last DbId
 * (1, DbId, 0 META, "uuid") = String
 *                  "revs_limit" = Long
 *                  "security" = String (JSON)
 *                  "incarnation" = Long   RFC D: bumped when a database moves to another cluster
 *                  "access" = Boolean     a per-document access database; written at creation only
 *                  "partitioned" = Long   1 for a partitioned database; absent otherwise, set only at creation
 * </pre>
 *
 * Every transaction that uses a database reads its directory entry once ({@link #open}): that
 * one read both checks the cached handle (the entry's bytes change with every metadata edit, and
 * with deletion) and makes a concurrent deletion conflict with the transaction. A write in one
 * database never invalidates another's handle.
 */
final class DatabaseDirectory {
    private static final Pattern NAME = Pattern.compile("^[a-z][a-z0-9_$()+/-]*$");
    /**
     * CouchDB keeps a database as files named after it: a name whose last {@code /}-separated part
     * leaves no room in 255 bytes for the shard's {@code .1234567890.couch} suffix, or whose other
     * parts or whole would not fit a path, is {@code database_name_too_long} when it is created.
     */
    private static final int MAX_LAST_SEGMENT = 238;
    private static final int MAX_SEGMENT = 255;
    private static final int MAX_NAME_LENGTH = 4000;
    private static final Set<String> SYSTEM_DBS = Set.of("_users", "_replicator", "_global_changes");

    /** An access database starts admin-only: its admins decide who joins (typically members {@code {"roles": ["_users"]}}). */
    static final String ACCESS_SECURITY_JSON = "{\"members\":{\"roles\":[\"_admin\"]},\"admins\":{\"roles\":[\"_admin\"]}}";

    private final KvStore kv;
    private final String defaultSecurityJson;
    /** CouchDB's {@code db_open_time}: reading a database's metadata when no handle is cached. */
    private final dev.chaise.stats.Histogram openTime;
    private final ConcurrentHashMap<String, Cached> cache = new ConcurrentHashMap<>();

    /** A cached handle and its directory entry's key, which every open reads (packing the key cost a tenth of the open). */
    private record Cached(byte[] key, DbHandle handle) {}

    /** @param defaultSecurityJson the {@code _security} object of a new database */
    DatabaseDirectory(KvStore kv, String defaultSecurityJson, dev.chaise.stats.Histogram openTime) {
        this.kv = kv;
        this.defaultSecurityJson = defaultSecurityJson;
        this.openTime = openTime;
    }

    /** Handles cached now: CouchDB's open_databases. */
    int openHandles() {
        return cache.size();
    }

    static void validateName(String name) {
        if (name == null || !(NAME.matcher(name).matches() || SYSTEM_DBS.contains(name))) {
            throw new StorageException(StorageException.Kind.ILLEGAL_DATABASE_NAME,
                    "Name: '" + name + "'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter.");
        }
    }

    /** See {@link #MAX_LAST_SEGMENT}: names are ASCII, so characters are bytes. */
    static void checkNameLength(String name) {
        String[] parts = name.split("/", -1);
        boolean tooLong = name.length() > MAX_NAME_LENGTH || parts[parts.length - 1].length() > MAX_LAST_SEGMENT;
        for (String p : parts) tooLong |= p.length() > MAX_SEGMENT;
        if (tooLong) {
            throw new StorageException(StorageException.Kind.DATABASE_NAME_TOO_LONG, "At least one path segment of `" + name + "` is too long.");
        }
    }

    /**
     * Creates a database. After a 1021 (commit_unknown_result) the next attempt first looks for the
     * uuid this call chose, so a create that did commit is not answered {@code file_exists}.
     */
    DbHandle create(String name) {
        return create(name, DbProps.PLAIN);
    }

    /** {@link #create(String)} as {@code props} make it: an access database gets an admin-only {@code _security}. */
    DbHandle create(String name, DbProps props) {
        boolean access = props.access(), partitioned = props.partitioned();
        validateName(name);
        checkNameLength(name);
        if (partitioned && isSystemDb(name)) throw StorageException.badRequest("Cannot partition a system database");
        String uuid = HexFormat.of().formatHex(randomBytes(16));
        kv.run(tx -> {
            byte[] entryKey = KeySpace.dbEntry(name);
            if (tx.get(entryKey) != null) {
                throw new StorageException(StorageException.Kind.FILE_EXISTS, "The database could not be created, the file already exists.");
            }
            byte[] counter = tx.get(KeySpace.dbIdCounter());
            long id = (counter == null ? 0 : Tuple.fromBytes(counter).getLong(0)) + 1;
            tx.set(KeySpace.dbIdCounter(), Tuple.from(id).pack());
            DatabaseSubspace space = DatabaseSubspace.of(id);
            tx.set(space.pack(KeySpace.Db.META, "uuid"), Tuple.from(uuid).pack());
            tx.set(space.pack(KeySpace.Db.META, "revs_limit"), Tuple.from((long) EditBranches.DEFAULT_REVS_LIMIT).pack());
            tx.set(space.pack(KeySpace.Db.META, "security"), Tuple.from(access ? ACCESS_SECURITY_JSON : defaultSecurityJson).pack());
            if (access) tx.set(space.pack(KeySpace.Db.META, "access"), Tuple.from(true).pack());
            tx.set(space.pack(KeySpace.Db.META, "incarnation"), Tuple.from(0L).pack());
            if (partitioned) tx.set(space.pack(KeySpace.Db.META, "partitioned"), Tuple.from(1L).pack());
            stampEntry(tx, name, id);
            DbUpdates.record(tx, name, DbUpdates.CREATED, 0);
            return Boolean.TRUE;
        }, tx -> {
            byte[] entry = tx.get(KeySpace.dbEntry(name));
            if (entry == null) return Optional.empty();
            byte[] ours = tx.get(DatabaseSubspace.of(Tuple.fromBytes(entry).getLong(0)).pack(KeySpace.Db.META, "uuid"));
            return ours != null && Tuple.fromBytes(ours).getString(0).equals(uuid) ? Optional.of(Boolean.TRUE) : Optional.empty();
        });
        return open(name);
    }

    /**
     * {@code couch_partition:validate_dbname}: CouchDB's system databases, and any whose last
     * {@code /}-separated part is {@code _users} or {@code _replicator}, cannot be partitioned.
     */
    private static boolean isSystemDb(String name) {
        String suffix = name.substring(name.lastIndexOf('/') + 1);
        return Set.of("_dbs", "_global_changes", "_metadata", "_nodes", "_replicator", "_users").contains(name)
                || suffix.equals("_users") || suffix.equals("_replicator");
    }

    /** Deletes the database and every key it had. */
    void delete(String name) {
        validateName(name);
        kv.run(tx -> {
            DbHandle h = open(tx, name);
            tx.clear(KeySpace.dbEntry(name));
            DbUpdates.record(tx, name, DbUpdates.DELETED, 0);
            tx.clear(h.space().begin(), h.space().end());
            return Boolean.TRUE;
        }, tx -> tx.get(KeySpace.dbEntry(name)) == null ? Optional.of(Boolean.TRUE) : Optional.empty()); // gone is gone, whoever did it
        cache.remove(name);
    }

    /**
     * The handle for {@code name}, checked inside {@code tx}: one read of the directory entry. If
     * the entry changed since the handle was cached, the metadata is re-read in the same
     * transaction.
     */
    DbHandle open(ReadTransaction tx, String name) {
        Cached c = cache.get(name);
        byte[] key = c != null ? c.key() : KeySpace.dbEntry(name);
        byte[] entry = tx.get(key);
        if (entry == null) {
            cache.remove(name);
            throw StorageException.notFound("Database does not exist.");
        }
        if (c != null && Arrays.equals(c.handle().entry(), entry)) return c.handle();
        long start = System.nanoTime();
        DbHandle h = readMetadata(tx, name, entry);
        openTime.recordNanos(System.nanoTime() - start); // CouchDB's db_open_time: a database not open yet
        cache.put(name, new Cached(key, h));
        return h;
    }

    /** The handle cached for {@code name}, as last seen by a transaction here, or null: not checked against the store. */
    DbHandle cached(String name) {
        Cached c = cache.get(name);
        return c == null ? null : c.handle();
    }

    /** Opens the database in a transaction of its own. */
    DbHandle open(String name) {
        return kv.run(tx -> open(tx, name));
    }

    boolean exists(String name) {
        return kv.run(tx -> tx.get(KeySpace.dbEntry(name)) != null);
    }

    private DbHandle readMetadata(ReadTransaction tx, String name, byte[] entry) {
        long id = Tuple.fromBytes(entry).getLong(0);
        DatabaseSubspace space = DatabaseSubspace.of(id);
        String uuid = null;
        String security = "{}";
        int revsLimit = EditBranches.DEFAULT_REVS_LIMIT;
        int incarnation = 0;
        boolean access = false;
        boolean partitioned = false;
        byte[][] r = space.range(KeySpace.Db.META);
        for (KeyValue kv : tx.getRangeAsList(r[0], r[1], 0, false)) {
            String field = space.unpack(kv.key()).getString(1);
            Tuple v = Tuple.fromBytes(kv.value());
            switch (field) {
                case "uuid" -> uuid = v.getString(0);
                case "security" -> security = v.getString(0);
                case "revs_limit" -> revsLimit = (int) v.getLong(0);
                case "incarnation" -> incarnation = (int) v.getLong(0);
                case "access" -> access = v.getBoolean(0);
                case "partitioned" -> partitioned = v.getLong(0) == 1;
                default -> { } // fields of later versions
            }
        }
        return new DbHandle(name, id, space, uuid, revsLimit, security, incarnation, entry, partitioned, access);
    }

    /** @param open opens the database in a transaction, checked to be the one meant ({@link Database#handle}) */
    void setRevsLimit(Function<ReadTransaction, DbHandle> open, int limit) {
        if (limit < 1 || limit > EditBranches.MAX_REVS_LIMIT) {
            throw StorageException.badRequest("revs_limit must be a positive integer no larger than " + EditBranches.MAX_REVS_LIMIT);
        }
        setMeta(open, "revs_limit", Tuple.from((long) limit).pack());
    }

    void setSecurity(Function<ReadTransaction, DbHandle> open, String securityJson) {
        setMeta(open, "security", Tuple.from(securityJson).pack());
    }

    private void setMeta(Function<ReadTransaction, DbHandle> open, String field, byte[] value) {
        kv.run(tx -> {
            DbHandle h = open.apply(tx);
            tx.set(h.space().pack(KeySpace.Db.META, field), value);
            stampEntry(tx, h.name(), h.id());
            return null;
        }, tx -> Optional.empty()); // setting it again is harmless: after a 1021, just retry
    }

    /**
     * A design document of {@code db} was written or purged in {@code tx}: its entry is stamped
     * as for a metadata edit, so what is cached from the design documents (validate_doc_update
     * functions, interactive index definitions) is valid exactly while the entry's bytes are the
     * same, and a writer that read the entry before this commit conflicts with it, as
     * {@code fabric2_fdb} bumps the database's version on a design document update (issue 27).
     */
    static void designChanged(Transaction tx, DbHandle db) {
        stampEntry(tx, db.name(), db.id());
    }

    /** Rewrites the directory entry with this commit's versionstamp, so cached handles go stale. */
    private static void stampEntry(Transaction tx, String name, long id) {
        tx.setVersionstampedValue(KeySpace.dbEntry(name), Versionstamps.packWithVersionstamp(new byte[0], Tuple.from(id, Versionstamp.incomplete(0))));
    }

    /**
     * Database names in order, as {@code _all_dbs} wants them: inclusive bounds (null for none),
     * {@code limit} 0 for all.
     */
    List<String> list(String startKey, String endKey, boolean descending, int skip, int limit) {
        return kv.run(tx -> {
            byte[] begin = KeySpace.dbEntriesBegin();
            byte[] end = KeySpace.dbEntriesEnd();
            String lo = descending ? endKey : startKey;
            String hi = descending ? startKey : endKey;
            if (lo != null) begin = max(begin, KeySpace.dbEntry(lo));
            if (hi != null) end = min(end, Keys.keyAfter(KeySpace.dbEntry(hi)));
            List<String> out = new ArrayList<>();
            if (Keys.compare(begin, end) >= 0) return out;
            int skipped = 0;
            try (var it = tx.snapshot().getRange(begin, end, 0, descending)) {
                while (it.hasNext() && (limit <= 0 || out.size() < limit)) {
                    KeyValue e = it.next();
                    if (skipped++ < skip) continue;
                    out.add(Tuple.fromBytes(e.key()).getString(2));
                }
            }
            return out;
        });
    }

    private static byte[] max(byte[] a, byte[] b) {
        return Keys.compare(a, b) >= 0 ? a : b;
    }

    private static byte[] min(byte[] a, byte[] b) {
        return Keys.compare(a, b) <= 0 ? a : b;
    }

    static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        ThreadLocalRandom.current().nextBytes(b);
        return b;
    }
}
