package dev.chaise.storage;

import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import java.util.function.Function;

/**
 * Transactions on one database for the owners of its other subspaces: views' map indexes and
 * reduce trees (Mango's indexes among them), whose keys live under the database's prefix
 * ({@link DbHandle#space()}) and which must read documents and write their own rows in one
 * transaction, so that a build batch commits with the update seq it read. This is the one part of
 * storage's API that hands out KV transactions above storage; together with {@link DbReader#tx()}
 * (index reads at a read's version) it is all that views use of the KV seam for a database.
 *
 * <pre>
 * Database ── subspaces() ── run(body)          read-write, retried on conflicts
 *                          ├─ runGuarded(body)   guarded by a transaction id (RFC D), for atomic adds
 *                          ├─ reader(tx, db)     document reads inside such a transaction
 *                          └─ scan(range, ...)   a {@link Cursor} over the owner's own range
 * </pre>
 *
 * <p>Documents are never written through it: every document write goes through {@link SecuredDb}.
 */
public final class SubspaceAccess {

    /** The body of a transaction on the database. It may run more than once. */
    @FunctionalInterface
    public interface TxBody<T> {
        T apply(Transaction tx, DbHandle db);
    }

    private final Database db;

    SubspaceAccess(Database db) {
        this.db = db;
    }

    /** A read-write transaction, retried on conflicts; a 1021 is thrown (use {@link #runGuarded} for writes that must not happen twice). */
    public <T> T run(TxBody<T> body) {
        return db.run(body);
    }

    /**
     * A write guarded by a transaction id (RFC D): after a 1021 the next attempt learns whether
     * the first committed and returns its result, decoded from what {@code encode} stored.
     */
    public <T> T runGuarded(TxBody<T> body, Function<T, byte[]> encode, Function<byte[], T> decode) {
        return db.runGuarded(body, encode, decode);
    }

    /**
     * Document reads inside a transaction of {@link #run} or {@link #runGuarded}. Reads through a
     * non-snapshot transaction add conflict ranges, as the transaction's own reads do.
     */
    public DbReader reader(ReadTransaction tx, DbHandle handle) {
        return DbReader.of(tx, handle, db.timer());
    }

    /**
     * A scan of one of the owner's ranges (a view's rows): {@code range} computed from the handle,
     * its continuations relative to the range's prefix; rows mapped inside the transaction that
     * read them.
     */
    public <T> Cursor<T> scan(Cursor.Range range, ScanProperties props, byte[] continuation, Cursor.RowMapper<T> mapper) {
        return new Cursor<>(db, range, props, continuation, mapper);
    }
}
