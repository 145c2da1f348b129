package dev.chaise.views.mango;

import com.apple.foundationdb.tuple.Tuple;
import java.util.Base64;

/**
 * Where a {@code _find} page stopped, opaque to clients: the index the query ran on, which of its
 * planned ranges, and the storage cursor's continuation in it (the key of the last matching row,
 * relative to the index's own prefix, so it names no database and survives a rebuild). The next
 * request starts right after that row, then applies its {@code skip}, as CouchDB's does.
 *
 * <p>Encoding: URL-safe base64 of the tuple {@code (1, index, range, continuation)}, the index as
 * the first 8 bytes of the SHA-1 of its id ({@link MangoIndex#id}), which is all a check needs.
 */
record Bookmark(byte[] index, int range, byte[] continuation) {
    private static final long VERSION = 1;

    static byte[] tag(MangoIndex i) {
        return java.util.Arrays.copyOf(IndexNames.sha1(i.id().getBytes(java.nio.charset.StandardCharsets.UTF_8)), 8);
    }

    boolean isOn(MangoIndex i) {
        return java.util.Arrays.equals(index, tag(i));
    }

    String encode() {
        byte[] b = Tuple.from(VERSION, index, (long) range, continuation).pack();
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    /** Null for no bookmark ({@code "nil"}, empty); 400 {@code invalid_bookmark} for anything else that is not one. */
    static Bookmark decode(String s) {
        if (s == null || s.isEmpty() || s.equals("nil")) return null;
        try {
            Tuple t = Tuple.fromBytes(Base64.getUrlDecoder().decode(s));
            if (t.size() == 4 && t.getLong(0) == VERSION) {
                long range = t.getLong(2);
                if (range >= 0 && range < Integer.MAX_VALUE && t.getBytes(3) != null && t.getBytes(1) != null) {
                    return new Bookmark(t.getBytes(1), (int) range, t.getBytes(3));
                }
            }
        } catch (RuntimeException e) {
            // not base64, not a tuple, or elements of other types: all mean the same to the client
        }
        throw invalid(s);
    }

    static MangoException invalid(String s) {
        return new MangoException("invalid_bookmark", "Invalid bookmark value: " + com.fasterxml.jackson.databind.node.TextNode.valueOf(s));
    }
}
