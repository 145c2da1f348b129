package dev.chaise.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * The revision id of an interactive edit, byte for byte as CouchDB 3's {@code couch_db:new_revid}
 * computes it, so the same edit gets the same revision on CouchDB and on Chaise (and a client
 * that knows CouchDB's ids, as CouchDB's own tests do, finds them here):
 *
 * <pre>
 * md5(term_to_binary([Deleted, OldPos, OldRevId, Body, Atts], [{minor_version, 1}]))
 *   Deleted    the atom true or false
 *   OldPos     the parent's position, 0 for a new document
 *   OldRevId   the parent's id: 32 hex digits as their 16 bytes, any other as its text; 0 for none
 *   Body       the members as jiffy decodes them, in the order the client sent them, without
 *              _attachments ({[{Key, Value}]}; strings binaries; true/false/null atoms)
 *   Atts       {Name, ContentType, Md5} per attachment, in the reverse of the _attachments order
 * </pre>
 *
 * The term is streamed into the digest from the document's tree ({@link ErlangTerm#writeEjson}),
 * never built. Member order now counts, as in CouchDB: the same members in another order are
 * another edit.
 */
final class RevHasher {

    /** An attachment as it enters the hash; {@code digest} is CouchDB's {@code "md5-" + base64(md5)}. */
    public record AttachmentDigest(String name, String contentType, String digest) {}

    private RevHasher() {}

    /**
     * The new revision of an edit of {@code parent} (null for a new document).
     *
     * @param body the document's members (an {@code _attachments} member is skipped); null is an empty body
     * @param attachments in the order of the document's {@code _attachments}
     */
    public static RevId newRevId(RevId parent, boolean deleted, JsonNode body, List<AttachmentDigest> attachments) {
        if (body != null && !body.isNull() && !body.isObject()) throw new IllegalArgumentException("document body must be a JSON object");
        long pos = parent == null ? 1 : parent.pos() + 1;
        return RevId.fromDigest(pos, hash(parent, deleted, body == null || body.isNull() ? null : (ObjectNode) body,
                attachments == null ? List.of() : attachments));
    }

    private static byte[] hash(RevId parent, boolean deleted, ObjectNode body, List<AttachmentDigest> atts) {
        DigestStream out = DIGESTS.get();
        try {
            out.write(131);
            out.write(108); // LIST_EXT of five
            ErlangTerm.u32(out, 5);
            ErlangTerm.atom(out, deleted ? "true" : "false");
            if (parent == null) {
                ErlangTerm.writeInteger(out, 0);
                ErlangTerm.writeInteger(out, 0);
            } else {
                ErlangTerm.writeInteger(out, parent.pos());
                ErlangTerm.binary(out, revIdBytes(parent.hash()));
            }
            body(out, body);
            if (atts.isEmpty()) {
                out.write(106); // NIL_EXT
            } else {
                out.write(108);
                ErlangTerm.u32(out, atts.size());
                for (int i = atts.size() - 1; i >= 0; i--) { // couch_db folds them onto a list: last first
                    AttachmentDigest a = atts.get(i);
                    out.write(104); // SMALL_TUPLE_EXT of three
                    out.write(3);
                    ErlangTerm.binary(out, a.name().getBytes(StandardCharsets.UTF_8));
                    ErlangTerm.binary(out, (a.contentType() == null ? "application/octet-stream" : a.contentType()).getBytes(StandardCharsets.UTF_8));
                    ErlangTerm.binary(out, md5Of(a.digest()));
                }
                out.write(106);
            }
            out.write(106); // the five's proper end
            return out.digest();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a digest does not fail
        } finally {
            out.reset();
        }
    }

    /** {@code {[{Key, Value}]}} of the members but {@code _attachments}. */
    private static void body(DigestStream out, ObjectNode body) throws IOException {
        int n = body == null ? 0 : body.size() - (body.has("_attachments") ? 1 : 0);
        out.write(104);
        out.write(1);
        if (n == 0) {
            out.write(106);
            return;
        }
        out.write(108);
        ErlangTerm.u32(out, n);
        for (Map.Entry<String, JsonNode> e : body.properties()) {
            if (e.getKey().equals("_attachments")) continue;
            out.write(104);
            out.write(2);
            ErlangTerm.binary(out, MemberNames.of(e.getKey()).utf8());
            ErlangTerm.writeEjson(out, e.getValue());
        }
        out.write(106);
    }

    /** {@code couch_doc:parse_revid}: 32 hex digits (either case) are an integer of 128 bits, anything else its text. */
    static byte[] revIdBytes(String hash) {
        if (hash.length() == 32) {
            byte[] b = new byte[16];
            for (int i = 0; i < 16; i++) {
                int hi = Character.digit(hash.charAt(2 * i), 16);
                int lo = Character.digit(hash.charAt(2 * i + 1), 16);
                if (hi < 0 || lo < 0) return hash.getBytes(StandardCharsets.UTF_8);
                b[i] = (byte) (hi << 4 | lo);
            }
            return b;
        }
        return hash.getBytes(StandardCharsets.UTF_8);
    }

    /** The 16 bytes of an {@code md5-<base64>} digest; another kind of digest enters as its text. */
    private static byte[] md5Of(String digest) {
        if (digest.startsWith("md5-")) {
            try {
                return Base64.getDecoder().decode(digest.substring(4));
            } catch (IllegalArgumentException e) {
                // not base64: falls through to the text
            }
        }
        return digest.getBytes(StandardCharsets.UTF_8);
    }

    /** Bytes into an MD5 through a small buffer: the term is never held whole. One per thread. */
    private static final class DigestStream extends OutputStream {
        private final MessageDigest md;
        private final byte[] buf = new byte[4096];
        private int len;

        DigestStream() {
            try {
                md = MessageDigest.getInstance("MD5");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("MD5 is a required JDK algorithm", e);
            }
        }

        @Override
        public void write(int b) {
            if (len == buf.length) flushBuffer();
            buf[len++] = (byte) b;
        }

        @Override
        public void write(byte[] b, int off, int n) {
            if (n > buf.length - len) {
                flushBuffer();
                if (n > buf.length) {
                    md.update(b, off, n);
                    return;
                }
            }
            System.arraycopy(b, off, buf, len, n);
            len += n;
        }

        private void flushBuffer() {
            md.update(buf, 0, len);
            len = 0;
        }

        byte[] digest() {
            flushBuffer();
            return md.digest(); // resets it
        }

        void reset() {
            len = 0;
            md.reset();
        }
    }

    /** One stream and digest per thread: getInstance looks up the provider each time, a visible cost per document. */
    private static final ThreadLocal<DigestStream> DIGESTS = new ThreadLocal<>() {
        // A class of its own, not a method reference: C2 compiled the reference's hidden class
        // (the provider lookup inlined) in a restart's first bulk load, with no profile to start from.
        @Override
        protected DigestStream initialValue() {
            return new DigestStream();
        }
    };
}
