package dev.chaise.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import dev.chaise.storage.json.Json;
import java.io.ByteArrayOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * Attachment bodies, content-addressed per document.
 *
 * <pre>
 * (1, DbId)
 * ├── 8 ATTACHMENTS, DocId, Md5, ChunkNo = bytes       chunks of 64 KB, under the 100 KB value limit
 * └── 9 UPLOADS, StartMillis, Nonce, ChunkNo = bytes   a large body on its way in, before its md5 is known
 * </pre>
 *
 * A revision's body keeps only the metadata, as {@code _attachments: {name: {content_type, revpos,
 * digest, length, stub}}}, plus {@code encoding: "gzip"} and {@code encoded_length} for a body
 * stored gzipped (a compressible type, {@link AttachmentCompression}, or one sent gzipped);
 * revisions that keep an attachment share its chunks, because the key is the stored bytes' md5. Chunks no leaf revision names any more are cleared by {@link #sweep}
 * ({@code _compact}).
 *
 * <p>A small attachment is written in its document's transaction. A large one would not fit FDB's
 * 10 MB transactions, so it is stored first ({@link AttachmentStore}): streamed into
 * UPLOADS a megabyte per transaction, then moved under its md5 once the stream has ended, and the
 * document's transaction only checks that the chunks are there. Uploads a crash or a broken
 * connection abandons are cleared by the sweep once they are an hour old.
 */
final class AttachmentsSubspace {
    static final int CHUNK = 65_536;
    /** Chunks per transaction when storing or moving a large attachment: 1 MB, far under FDB's 10 MB. */
    static final int CHUNKS_PER_TX = 16;
    /** Uploads older than this are abandoned: no request streams for an hour. */
    static final long ABANDONED_MILLIS = 3_600_000;

    /** A large body's place while it streams in. */
    record Upload(long startMillis, long nonce) {
        static Upload next() {
            return new Upload(System.currentTimeMillis(), java.util.concurrent.ThreadLocalRandom.current().nextLong());
        }
    }

    private AttachmentsSubspace() {}

    static byte[][] docRange(DbHandle db, String docId) {
        return db.space().range(KeySpace.Db.ATTACHMENTS, docId);
    }

    static byte[][] range(DbHandle db, String docId, byte[] md5) {
        return db.space().range(KeySpace.Db.ATTACHMENTS, docId, md5);
    }

    static byte[] chunkKey(DbHandle db, String docId, byte[] md5, long n) {
        return db.space().pack(KeySpace.Db.ATTACHMENTS, docId, md5, n);
    }

    private static byte[] uploadKey(DbHandle db, Upload u, long n) {
        return db.space().pack(KeySpace.Db.UPLOADS, u.startMillis(), u.nonce(), n);
    }

    static byte[][] uploadRange(DbHandle db, Upload u) {
        return db.space().range(KeySpace.Db.UPLOADS, u.startMillis(), u.nonce());
    }

    /** Writes chunks {@code first...} of an upload. */
    static void writeUpload(Transaction tx, DbHandle db, Upload u, long first, List<byte[]> chunks) {
        for (int i = 0; i < chunks.size(); i++) {
            tx.set(uploadKey(db, u, first + i), chunks.get(i));
        }
    }

    /**
     * Moves chunks {@code [from, from + CHUNKS_PER_TX)} of an upload under the attachment's md5.
     * Safe to run again after a {@code commit_unknown_result}: chunks already moved are found in
     * their new place.
     */
    static void moveUpload(Transaction tx, DbHandle db, Upload u, long from, long total, String docId, byte[] md5) {
        long to = Math.min(total, from + CHUNKS_PER_TX);
        byte[] begin = uploadKey(db, u, from);
        byte[] end = uploadKey(db, u, to);
        List<KeyValue> chunks = tx.getRangeAsList(begin, end, 0, false);
        if (chunks.isEmpty()) {
            // Moved by an attempt that did commit; or swept (an upload older than an hour): the client sends it again.
            if (tx.get(chunkKey(db, docId, md5, from)) == null) throw StorageException.conflict();
            return;
        }
        long n = from;
        for (KeyValue kv : chunks) tx.set(chunkKey(db, docId, md5, n++), kv.value());
        tx.clear(begin, end);
    }

    /** Whether a stored attachment's first and last chunks are in place (a sweep may have raced its document). */
    static boolean present(ReadTransaction tx, DbHandle db, String docId, StoredAttachment s) {
        byte[] md5 = md5Of(s.digest());
        long last = Math.max(0, (s.encodedLength() - 1) / CHUNK); // chunks hold the stored bytes
        return tx.get(chunkKey(db, docId, md5, 0)) != null && tx.get(chunkKey(db, docId, md5, last)) != null;
    }

    /** Clears uploads older than {@link #ABANDONED_MILLIS}; returns how many chunks went. */
    static int sweepUploads(Transaction tx, DbHandle db, long nowMillis) {
        byte[][] all = db.space().range(KeySpace.Db.UPLOADS);
        byte[] oldEnd = db.space().pack(KeySpace.Db.UPLOADS, nowMillis - ABANDONED_MILLIS);
        int n = tx.getRangeAsList(all[0], oldEnd, 0, false).size();
        tx.clear(all[0], oldEnd);
        return n;
    }

    static void write(Transaction tx, DbHandle db, String docId, byte[] md5, byte[] data) {
        for (int off = 0, n = 0; off < data.length || n == 0; off += CHUNK, n++) {
            byte[] chunk = java.util.Arrays.copyOfRange(data, off, Math.min(data.length, off + CHUNK));
            tx.set(chunkKey(db, docId, md5, n), chunk);
            if (data.length == 0) break;
        }
    }

    /** The whole attachment, or null if its chunks are gone. */
    static byte[] read(ReadTransaction tx, DbHandle db, String docId, String digest) {
        byte[][] r = range(db, docId, md5Of(digest));
        List<KeyValue> chunks = tx.getRangeAsList(r[0], r[1], 0, false);
        if (chunks.isEmpty()) return null;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (KeyValue kv : chunks) out.writeBytes(kv.value());
        return out.toByteArray();
    }

    /**
     * Inlines attachment bodies as base64 into a rendered document, as CouchDB shows them (data,
     * decoded, no {@code stub} or {@code length}): all of them for {@code sincePos} 0, those with a
     * revpos above it for {@code atts_since}; a negative {@code sincePos} leaves stubs. How each is
     * stored comes from {@code stored}, the revision's body as kept.
     */
    static void inline(ReadTransaction tx, DbHandle db, String docId, ObjectNode stored, ObjectNode doc, long sincePos) {
        if (sincePos < 0) return;
        JsonNode atts = doc.get("_attachments");
        if (atts == null || !atts.isObject()) return;
        for (Map.Entry<String, JsonNode> e : atts.properties()) {
            ObjectNode meta = (ObjectNode) e.getValue();
            if (meta.path("revpos").asLong() <= sincePos) continue;
            byte[] data = read(tx, db, docId, meta.path("digest").asText());
            if (data == null) continue;
            if (gzipped(stored.path("_attachments").path(e.getKey()))) {
                try (java.io.InputStream in = Gzip.decode(new java.io.ByteArrayInputStream(data))) {
                    data = in.readAllBytes();
                } catch (java.io.IOException x) {
                    throw new java.io.UncheckedIOException(x);
                }
            }
            meta.remove("stub");
            meta.remove("length");
            meta.put("data", Base64.getEncoder().encodeToString(data));
        }
    }

    /** Whether an attachment's metadata, as stored, says its bytes are gzipped. */
    static boolean gzipped(JsonNode storedMeta) {
        return AttachmentStore.GZIP.equals(storedMeta.path("encoding").asText(null));
    }

    /** Chunks {@code from} onwards, at most {@code limit}: for streaming across transactions (chunks never change). */
    static List<byte[]> chunks(ReadTransaction tx, DbHandle db, String docId, String digest, long from, int limit) {
        byte[] md5 = md5Of(digest);
        byte[][] r = range(db, docId, md5);
        byte[] begin = chunkKey(db, docId, md5, from);
        List<byte[]> out = new ArrayList<>();
        for (KeyValue kv : tx.getRangeAsList(begin, r[1], limit, false)) out.add(kv.value());
        return out;
    }

    static byte[] md5Of(String digest) {
        if (digest == null || !digest.startsWith("md5-")) throw StorageException.badRequest("Invalid attachment digest: " + digest);
        try {
            return Base64.getDecoder().decode(digest.substring(4));
        } catch (IllegalArgumentException e) {
            throw StorageException.badRequest("Invalid attachment digest: " + digest);
        }
    }

    static String digestOf(byte[] md5) {
        return "md5-" + Base64.getEncoder().encodeToString(md5);
    }

    static byte[] md5(byte[] data) {
        return newMd5().digest(data);
    }

    static MessageDigest newMd5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Inline {@code data}: base64, whitespace allowed; null if invalid. */
    static byte[] decode(String base64) {
        try {
            return Base64.getDecoder().decode(base64.replaceAll("\\s", ""));
        } catch (IllegalArgumentException x) {
            return null;
        }
    }

    /** A body with its {@code _attachments} resolved to metadata, and the digests the revision id covers. */
    record Resolved(ObjectNode body, List<RevHasher.AttachmentDigest> digests) {}

    /**
     * Turns the {@code _attachments} a client sent into stored metadata: inline {@code data} is
     * written as chunks (revpos = the new revision's position, unless a replicated write gives
     * one), a {@code stub} takes its metadata from the revision it edits (or, when replicating,
     * from any leaf that has it); a stub nothing has is 412 {@code missing_stub}.
     *
     * @param parents the bodies stubs may come from
     * @param ahead bodies stored ahead of this transaction, for entries marked {@code follows}
     */
    static Resolved resolve(Transaction tx, DbHandle db, String docId, ObjectNode body, long newPos, boolean replicated,
                            List<ObjectNode> parents, long maxAttachmentSize, AttachmentCompression compression,
                            Map<String, StoredAttachment> ahead) {
        JsonNode atts = body.get("_attachments");
        ObjectNode stored = body.deepCopy();
        stored.remove("_attachments");
        if (atts == null || atts.isNull() || (atts.isObject() && atts.isEmpty())) return new Resolved(stored, List.of());
        if (!atts.isObject()) throw StorageException.badRequest("_attachments must be an object");
        ObjectNode metas = Json.NODES.objectNode();
        List<RevHasher.AttachmentDigest> digests = new ArrayList<>();
        for (Map.Entry<String, JsonNode> e : atts.properties()) {
            String name = e.getKey();
            JsonNode a = e.getValue();
            if (!a.isObject()) throw StorageException.badRequest("Attachment " + name + " must be an object");
            DocumentJson.validateAttachmentName(name);
            ObjectNode meta;
            if (a.path("stub").asBoolean(false)) {
                meta = stubFrom(parents, name, a);
                if (meta == null) throw new StorageException(StorageException.Kind.MISSING_STUB, "Invalid attachment stub in " + docId + " for " + name);
            } else if (a.has("data")) {
                if (!a.get("data").isTextual()) throw StorageException.badRequest("Invalid attachment data for " + name);
                byte[] data = decode(a.get("data").textValue());
                if (data == null) throw StorageException.badRequest("Invalid attachment data for " + name);
                if (data.length > maxAttachmentSize) {
                    throw new StorageException(StorageException.Kind.ATTACHMENT_TOO_LARGE, name);
                }
                meta = newMeta(a, replicated, newPos, writeInline(tx, db, docId, data, a, compression));
            } else if (a.path("follows").asBoolean(false) && ahead.containsKey(name)) {
                StoredAttachment st = ahead.get(name);
                // A compaction that ran between storing and now may have taken the chunks: try again.
                if (!present(tx, db, docId, st)) throw StorageException.conflict();
                meta = newMeta(a, replicated, newPos, st);
            } else if (a.path("follows").asBoolean(false)) {
                throw StorageException.badRequest("Attachment " + name + " follows, but the request is not multipart/related");
            } else {
                throw StorageException.badRequest("Attachment " + name + " needs data or stub");
            }
            metas.set(name, meta);
            digests.add(new RevHasher.AttachmentDigest(name, meta.path("content_type").asText(null), meta.get("digest").asText()));
        }
        stored.set("_attachments", metas);
        return new Resolved(stored, digests);
    }

    /** Writes inline data in this transaction, gzipped if its type is compressible (it is at most a megabyte). */
    private static StoredAttachment writeInline(Transaction tx, DbHandle db, String docId, byte[] data, JsonNode sent, AttachmentCompression compression) {
        int level = compression.levelFor(sent.path("content_type").asText(DEFAULT_TYPE));
        if (level == 0) {
            byte[] md5 = md5(data);
            write(tx, db, docId, md5, data);
            return new StoredAttachment(digestOf(md5), data.length);
        }
        byte[] gz;
        try (Gzip.Encoder e = Gzip.encode(new java.io.ByteArrayInputStream(data), level)) {
            gz = e.readAllBytes();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        byte[] md5 = md5(gz);
        write(tx, db, docId, md5, gz);
        return new StoredAttachment(digestOf(md5), data.length, AttachmentStore.GZIP, gz.length);
    }

    /**
     * A new attachment's metadata, in CouchDB's member order. The digest is the md5 of the stored
     * bytes, gzipped or not, as couch_db:with_stream keeps it; {@code length} is the identity
     * length, and a gzipped body adds {@code encoding} and {@code encoded_length}, which only
     * {@code att_encoding_info} shows ({@link DocumentJson#render}).
     */
    private static ObjectNode newMeta(JsonNode sent, boolean replicated, long newPos, StoredAttachment st) {
        ObjectNode meta = Json.NODES.objectNode();
        meta.put("content_type", sent.path("content_type").asText(DEFAULT_TYPE));
        meta.put("revpos", replicated && sent.path("revpos").canConvertToLong() ? sent.get("revpos").asLong() : newPos);
        meta.put("digest", st.digest());
        meta.put("length", st.length());
        meta.put("stub", true);
        if (st.encoding() != null) {
            meta.put("encoding", st.encoding());
            meta.put("encoded_length", st.encodedLength());
        }
        return meta;
    }

    private static final String DEFAULT_TYPE = "application/octet-stream";

    /**
     * The metadata a stub keeps, as couch_att:merge_stubs finds it: by name in a parent, with the
     * stub's {@code revpos}, if it gives one, the same (its digest is not compared: a CouchDB
     * source may name a body by bytes stored otherwise). Null if no parent has it.
     */
    private static ObjectNode stubFrom(List<ObjectNode> parents, String name, JsonNode stub) {
        JsonNode revpos = stub.get("revpos");
        for (ObjectNode p : parents) {
            JsonNode m = p == null ? null : p.path("_attachments").get(name);
            if (m == null || !m.isObject()) continue;
            if (revpos == null || revpos.isNull() || revpos.asLong(-1) == m.path("revpos").asLong(-2)) return ((ObjectNode) m).deepCopy();
        }
        return null;
    }

    /**
     * Clears the chunks of {@code docId} that none of its leaf revisions names: the garbage left
     * by edits that dropped or replaced attachments. Returns how many attachments were cleared.
     */
    static int sweep(Transaction tx, DbHandle db, String docId, List<ObjectNode> leafBodies) {
        java.util.Set<java.nio.ByteBuffer> keep = new java.util.HashSet<>();
        for (ObjectNode b : leafBodies) {
            if (b == null) continue;
            for (JsonNode m : b.path("_attachments")) {
                if (m.path("digest").isTextual()) keep.add(java.nio.ByteBuffer.wrap(md5Of(m.get("digest").textValue())));
            }
        }
        byte[][] r = docRange(db, docId);
        java.util.Set<java.nio.ByteBuffer> seen = new java.util.LinkedHashSet<>();
        for (KeyValue kv : tx.getRangeAsList(r[0], r[1], 0, false)) seen.add(java.nio.ByteBuffer.wrap(db.space().unpack(kv.key()).getBytes(2)));
        int cleared = 0;
        for (java.nio.ByteBuffer md5 : seen) {
            if (keep.contains(md5)) continue;
            byte[][] a = range(db, docId, md5.array());
            tx.clear(a[0], a[1]);
            cleared++;
        }
        return cleared;
    }

}
