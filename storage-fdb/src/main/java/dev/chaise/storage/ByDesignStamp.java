package dev.chaise.storage;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * What is derived from a database's design documents (validate_doc_update functions, interactive
 * index definitions), kept per database while its directory entry's bytes stay the same. Every
 * design document write or purge stamps the entry anew ({@link DatabaseDirectory#designChanged}),
 * and a write transaction reads the entry with a conflict range, so a value kept for the entry a
 * transaction read is the one it would read itself; a design document written concurrently
 * conflicts with that transaction instead.
 */
public final class ByDesignStamp<T> {
    /** Databases kept, at most: deleted ones leave values behind, so all are dropped past it. */
    private static final int DATABASES_KEPT = 10_000;

    private record Kept<T>(byte[] entry, T value) {}

    private final Map<Long, Kept<T>> byDatabase = new ConcurrentHashMap<>();

    /**
     * The value kept for {@code db} if its entry is the one kept with it, else {@code read}'s
     * (which must read it at the version {@code db} was read at), then kept.
     */
    public T get(DbHandle db, Supplier<T> read) {
        Kept<T> k = byDatabase.get(db.id());
        if (k != null && Arrays.equals(k.entry(), db.entry())) return k.value();
        T value = read.get();
        if (byDatabase.size() >= DATABASES_KEPT) byDatabase.clear();
        byDatabase.put(db.id(), new Kept<>(db.entry(), value));
        return value;
    }
}
