package dev.chaise.storage;

import dev.chaise.kv.TupleBytes;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A body's member names encoded once for every walk of it: a document write measures the body
 * ({@link JsonSize}), hashes it ({@link RevHasher}) and explodes it ({@link ExplodedJson}), and
 * each encoded every name again (UTF-8, the tuple element, a check for unpaired surrogates). The
 * documents of a database mostly share their names, and Jackson hands the same String for a
 * name it has seen, so the encodings are kept per name, for a bounded number of short names.
 */
final class MemberNames {
    /** A name's UTF-8, its tuple string element (null if ill-formed: an unpaired surrogate) and its quoted JSON size. */
    record Name(byte[] utf8, byte[] element, long jsonSize) {}

    /** Names kept, at most; beyond that a name is encoded each time. */
    static final int MAX_NAMES = 4096;
    /** Longer names are encoded each time: a body's long names are seldom another's. */
    static final int MAX_LENGTH = 64;

    private static final ConcurrentHashMap<String, Name> NAMES = new ConcurrentHashMap<>();

    private MemberNames() {}

    static Name of(String name) {
        Name n = NAMES.get(name);
        if (n != null) return n;
        n = new Name(name.getBytes(StandardCharsets.UTF_8), TupleBytes.wellFormed(name) ? TupleBytes.wellFormedString(name) : null,
                JsonSize.string(name));
        if (name.length() <= MAX_LENGTH && NAMES.size() < MAX_NAMES) NAMES.putIfAbsent(name, n);
        return n;
    }
}
