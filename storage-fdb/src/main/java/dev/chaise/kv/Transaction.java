package dev.chaise.kv;

import java.util.concurrent.CompletableFuture;

/**
 * A serializable transaction with FoundationDB's semantics: it reads at one version, sees its own
 * writes, and commits only if nothing it read (its read-conflict ranges) was written by a
 * transaction that committed after its read version. Limits are checked as FDB checks them:
 * keys over 10,000 bytes fail with 2102 and values over 100,000 bytes with 2103 when written;
 * a transaction over 10,000,000 bytes fails with 2101 at commit; one older than five seconds
 * fails with 1007.
 */
public interface Transaction extends ReadTransaction, AutoCloseable {

    /** A view of this transaction whose reads add no read-conflict ranges. */
    ReadTransaction snapshot();

    void set(byte[] key, byte[] value);

    /**
     * Sets every pair, exactly as that many {@link #set} calls would; a
     * {@link #nextWriteNoWriteConflictRange} before it applies to all of them, and is used up by
     * this call even when {@code kvs} is empty. Keys must ascend
     * (2000 {@code client_invalid_operation} otherwise); limits are checked before anything is
     * written. For a document body: the embedded engine keeps such a group as one entry, and
     * keeps the arrays themselves, so the caller hands them over and must not change them after.
     */
    void setAll(java.util.List<KeyValue> kvs);

    void clear(byte[] key);

    /** Clears {@code [begin, end)}. */
    void clear(byte[] begin, byte[] end);

    void mutate(MutationType type, byte[] key, byte[] param);

    /**
     * Sets a key that contains the commit's versionstamp: the last four bytes of {@code key} are
     * the little-endian offset of a 10-byte placeholder that is replaced at commit (FDB's API 520+
     * format; see {@link Versionstamps}). Such keys cannot be read back in the same transaction.
     */
    void setVersionstampedKey(byte[] key, byte[] value);

    /** As {@link #setVersionstampedKey}, with the placeholder and offset in the value. */
    void setVersionstampedValue(byte[] key, byte[] value);

    /**
     * FDB's {@code NEXT_WRITE_NO_WRITE_CONFLICT_RANGE}: the next write (set, clear, mutation or
     * versionstamped write) adds no write-conflict range, so it makes no other transaction fail.
     * For keys whose writers another key already serializes, such as a document's body behind
     * its revision KV; it keeps the resolver's work proportional to what can really conflict.
     */
    void nextWriteNoWriteConflictRange();

    void addReadConflictRange(byte[] begin, byte[] end);

    default void addReadConflictKey(byte[] key) {
        addReadConflictRange(key, Keys.keyAfter(key));
    }

    void addWriteConflictRange(byte[] begin, byte[] end);

    default void addWriteConflictKey(byte[] key) {
        addWriteConflictRange(key, Keys.keyAfter(key));
    }

    /**
     * A future that completes when the key's value changes after this transaction's view of it.
     * It is armed when the transaction commits (a read-only commit is enough), and may fire
     * spuriously, as FDB's watches may.
     */
    CompletableFuture<Void> watch(byte[] key);

    /** Commits; blocks until durable. Throws {@link KvException} on failure. */
    void commit();

    /** The 10-byte versionstamp of the committed transaction (8-byte version, 2-byte batch order). */
    byte[] getVersionstamp();

    /** The commit version, or -1 for a read-only transaction. */
    long getCommittedVersion();

    /** Approximate size as counted against the 10 MB limit. */
    long getApproximateSize();

    /** Abandons the transaction if it was not committed and frees its resources. */
    @Override
    void close();
}
