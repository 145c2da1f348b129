package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import dev.chaise.kv.KvStore;
import java.util.function.Supplier;

/**
 * Deployment-wide strings kept in the KV, so every node serving the same cluster agrees on them
 * (CouchDB keeps these in each node's ini, which a shared store makes unnecessary):
 * {@code (0, "server", Name) = (String)}.
 */
public final class ServerMetadata {
    public static final String UUID = "uuid";
    public static final String COOKIE_SECRET = "cookie_secret";

    private ServerMetadata() {}

    /** The stored value, or {@code initial} stored and returned if there was none (first writer wins). */
    public static String getOrCreate(KvStore kv, String name, Supplier<String> initial) {
        return kv.run(tx -> {
            byte[] key = KeySpace.serverValue(name);
            byte[] v = tx.get(key);
            if (v != null) return Tuple.fromBytes(v).getString(0);
            String value = initial.get();
            tx.set(key, Tuple.from(value).pack());
            return value;
        });
    }
}
