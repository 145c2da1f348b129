package dev.chaise.storage;

import dev.chaise.kv.KvException;

/**
 * Whether a failure says the store cannot answer now, though the same request may succeed later:
 * the KV seam's {@link KvException#unavailable()} (an unreachable or recovering cluster, a
 * transaction timeout, the retry limit reached, a closed store, or one that stopped writing after
 * an I/O failure). The HTTP layer answers it 503 "service unavailable", as CouchDB does; it names no
 * KV class, so it asks here.
 */
public final class StoreAvailability {
    private StoreAvailability() {}

    public static boolean unavailable(Throwable t) {
        return t instanceof KvException k && k.unavailable();
    }
}
