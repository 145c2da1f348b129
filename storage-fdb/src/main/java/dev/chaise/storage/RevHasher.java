package dev.chaise.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.TupleBytes;
import dev.chaise.storage.ExplodedJson.Leaves;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The revision id of an interactive edit: deterministic, so the same edit made on two replicas
 * gets the same revision (as CouchDB's new_revid, though not bit-compatible with it).
 *
 * <h2>What is hashed</h2>
 * The hash is the lowercase hex MD5 of the edit in the form it is stored, RFC A's exploded body,
 * so nothing is serialized twice on the write path:
 * <pre>
 * deleted        1 byte, 1 or 0
 * parent         tuple (pos, RevHash bytes), or the tuple null element for pos 1
 * attachments    varint count, then per attachment, sorted by name (code points):
 *                tuple (name, content_type or null, digest)
 * body leaves    per exploded leaf in key order: varint length, path; varint length, value
 * </pre>
 * Leaves under a top-level member whose name starts with {@code _} ({@code _attachments},
 * {@code _access}, …) are left out: attachments enter through their digests. The document id is
 * not hashed (CouchDB does not either). Every part is self-delimiting, so two different edits
 * never hash the same input. Two spellings of a body that store the same leaves (member order,
 * whitespace, {@code 2.0} and {@code 2.00}) give the same revision; ones that store differently
 * ({@code 1} and {@code 1.0}, returned as written) give different ones, as in CouchDB.
 */
final class RevHasher {

    /** An attachment as it enters the hash; {@code digest} is e.g. {@code "md5-…"}. */
    public record AttachmentDigest(String name, String contentType, String digest) {}

    /** Code point order: UTF-8 byte order. */
    private static final Comparator<AttachmentDigest> BY_NAME =
            (a, b) -> Arrays.compareUnsigned(a.name().getBytes(StandardCharsets.UTF_8), b.name().getBytes(StandardCharsets.UTF_8));

    private RevHasher() {}

    /** The new revision of an edit whose body is already exploded (the write path). */
    public static RevId newRevId(RevId parent, boolean deleted, Leaves body, List<AttachmentDigest> attachments) {
        long pos = parent == null ? 1 : parent.pos() + 1;
        return RevId.fromDigest(pos, hash(parent, deleted, body, attachments));
    }

    /** As above for a JSON body; null is an empty body. */
    public static RevId newRevId(RevId parent, boolean deleted, JsonNode body, List<AttachmentDigest> attachments) {
        if (body != null && !body.isNull() && !body.isObject()) throw new IllegalArgumentException("document body must be a JSON object");
        Leaves leaves = body == null || body.isNull() ? Leaves.NONE : ExplodedJson.explode(0, (ObjectNode) body);
        return newRevId(parent, deleted, leaves, attachments);
    }

    /** MD5 of the input described above. */
    private static byte[] hash(RevId parent, boolean deleted, Leaves body, List<AttachmentDigest> attachments) {
        TupleBytes head = new TupleBytes(64);
        if (parent == null) head.add(null);
        else head.add(parent.pos()).addBytes(parent.hashBytes());
        List<AttachmentDigest> atts = attachments == null ? List.of() : attachments;
        if (atts.size() > 1) {
            atts = new ArrayList<>(atts);
            atts.sort(BY_NAME);
        }
        TupleBytes tail = new TupleBytes(16);
        for (AttachmentDigest a : atts) tail.add(a.name()).add(a.contentType()).add(a.digest());
        int n = body.size();
        byte[] out = new byte[1 + head.length() + 5 + tail.length() + (int) body.activeSize(0) + 10 * n];
        int len = 0;
        out[len++] = (byte) (deleted ? 1 : 0);
        len = copy(head.toArray(), out, len);
        len = varint(out, len, atts.size());
        len = copy(tail.toArray(), out, len);
        byte[] paths = body.paths();
        for (int i = 0; i < n; i++) {
            int start = body.pathStart(i);
            if (paths[start] == 0x02 && paths[start + 1] == '_') continue; // under a special top-level member
            int pathLength = body.ends()[i] - start;
            len = varint(out, len, pathLength);
            System.arraycopy(paths, start, out, len, pathLength);
            len += pathLength;
            byte[] v = body.values()[i];
            len = varint(out, len, v.length);
            len = copy(v, out, len);
        }
        MessageDigest md = MD5.get();
        md.update(out, 0, len);
        return md.digest(); // resets it
    }

    private static int copy(byte[] from, byte[] to, int at) {
        System.arraycopy(from, 0, to, at, from.length);
        return at + from.length;
    }

    private static int varint(byte[] out, int len, int v) {
        while ((v & ~0x7f) != 0) {
            out[len++] = (byte) ((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out[len++] = (byte) v;
        return len;
    }

    /** One digest per thread: getInstance looks up the provider each time, a visible cost per document. */
    private static final ThreadLocal<MessageDigest> MD5 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("MD5 is a required JDK algorithm", e);
        }
    });
}
