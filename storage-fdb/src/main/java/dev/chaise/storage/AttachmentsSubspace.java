package dev.chaise.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import dev.chaise.storage.json.Json;
import dev.chaise.storage.rev.RevHasher;
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
 * (1, DbId, 8 ATTACHMENTS, DocId, Md5, ChunkNo) = bytes     chunks of 64 KB, under the 100 KB value limit
 * </pre>
 *
 * A revision's body keeps only the metadata, as {@code _attachments: {name: {content_type, revpos,
 * digest, length, stub}}}; revisions that keep an attachment share its chunks, because the key is
 * the content's md5. Chunks no leaf revision names any more are cleared by {@link #sweep}
 * ({@code _compact}).
 */
public final class AttachmentsSubspace {
    static final int CHUNK = 65_536;

    private AttachmentsSubspace() {}

    static byte[][] docRange(DbHandle db, String docId) {
        return db.space().range(DatabaseSubspace.ATTACHMENTS, docId);
    }

    static byte[][] range(DbHandle db, String docId, byte[] md5) {
        return db.space().range(DatabaseSubspace.ATTACHMENTS, docId, md5);
    }

    static void write(Transaction tx, DbHandle db, String docId, byte[] md5, byte[] data) {
        for (int off = 0, n = 0; off < data.length || n == 0; off += CHUNK, n++) {
            byte[] chunk = java.util.Arrays.copyOfRange(data, off, Math.min(data.length, off + CHUNK));
            tx.set(db.space().pack(DatabaseSubspace.ATTACHMENTS, docId, md5, (long) n), chunk);
            if (data.length == 0) break;
        }
    }

    /** The whole attachment, or null if its chunks are gone. */
    public static byte[] read(ReadTransaction tx, DbHandle db, String docId, String digest) {
        byte[][] r = range(db, docId, md5Of(digest));
        List<KeyValue> chunks = tx.getRangeAsList(r[0], r[1], 0, false);
        if (chunks.isEmpty()) return null;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (KeyValue kv : chunks) out.writeBytes(kv.value());
        return out.toByteArray();
    }

    /**
     * Inlines attachment bodies as base64 into a rendered document, as CouchDB shows them (data,
     * no {@code stub} or {@code length}): all of them for {@code sincePos} 0, those with a revpos
     * above it for {@code atts_since}; a negative {@code sincePos} leaves stubs.
     */
    public static void inline(ReadTransaction tx, DbHandle db, String docId, ObjectNode doc, long sincePos) {
        if (sincePos < 0) return;
        JsonNode atts = doc.get("_attachments");
        if (atts == null || !atts.isObject()) return;
        for (JsonNode m : atts) {
            ObjectNode meta = (ObjectNode) m;
            if (meta.path("revpos").asLong() <= sincePos) continue;
            byte[] data = read(tx, db, docId, meta.path("digest").asText());
            if (data == null) continue;
            meta.remove("stub");
            meta.remove("length");
            meta.put("data", Base64.getEncoder().encodeToString(data));
        }
    }

    /** Chunks {@code from} onwards, at most {@code limit}: for streaming across transactions (chunks never change). */
    public static List<byte[]> chunks(ReadTransaction tx, DbHandle db, String docId, String digest, long from, int limit) {
        byte[][] r = range(db, docId, md5Of(digest));
        byte[] begin = db.space().pack(DatabaseSubspace.ATTACHMENTS, docId, md5Of(digest), from);
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
        try {
            return MessageDigest.getInstance("MD5").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A body with its {@code _attachments} resolved to metadata, and the digests the revision id covers. */
    record Resolved(ObjectNode body, List<RevHasher.AttachmentDigest> digests, ObjectNode bodyForHash) {}

    /**
     * Turns the {@code _attachments} a client sent into stored metadata: inline {@code data} is
     * written as chunks (revpos = the new revision's position, unless a replicated write gives
     * one), a {@code stub} takes its metadata from the revision it edits (or, when replicating,
     * from any leaf that has it); a stub nothing has is 412 {@code missing_stub}.
     *
     * @param parents the bodies stubs may come from
     */
    static Resolved resolve(Transaction tx, DbHandle db, String docId, ObjectNode body, long newPos, boolean replicated,
                            List<ObjectNode> parents, long maxAttachmentSize) {
        JsonNode atts = body.get("_attachments");
        ObjectNode hashBody = body.deepCopy();
        hashBody.remove("_attachments");
        if (atts == null || atts.isNull() || (atts.isObject() && atts.isEmpty())) return new Resolved(hashBody, List.of(), hashBody);
        if (!atts.isObject()) throw StorageException.badRequest("_attachments must be an object");
        ObjectNode metas = Json.NODES.objectNode();
        List<RevHasher.AttachmentDigest> digests = new ArrayList<>();
        for (Map.Entry<String, JsonNode> e : atts.properties()) {
            String name = e.getKey();
            JsonNode a = e.getValue();
            if (!a.isObject()) throw StorageException.badRequest("Attachment " + name + " must be an object");
            if (name.startsWith("_")) throw StorageException.badRequest("Attachment name '" + name + "' starts with prohibited character '_'");
            ObjectNode meta;
            if (a.path("stub").asBoolean(false)) {
                meta = stubFrom(parents, name, a);
                if (meta == null) throw new StorageException(StorageException.Kind.MISSING_STUB, "Invalid attachment stub in " + docId + " for " + name);
            } else if (a.has("data")) {
                if (!a.get("data").isTextual()) throw StorageException.badRequest("Invalid attachment data for " + name);
                byte[] data;
                try {
                    data = Base64.getDecoder().decode(a.get("data").textValue().replaceAll("\\s", ""));
                } catch (IllegalArgumentException x) {
                    throw StorageException.badRequest("Invalid attachment data for " + name);
                }
                if (data.length > maxAttachmentSize) {
                    throw new StorageException(StorageException.Kind.ATTACHMENT_TOO_LARGE, name);
                }
                byte[] md5 = md5(data);
                write(tx, db, docId, md5, data);
                meta = Json.NODES.objectNode();
                meta.put("content_type", a.path("content_type").asText("application/octet-stream"));
                meta.put("revpos", replicated && a.path("revpos").canConvertToLong() ? a.get("revpos").asLong() : newPos);
                meta.put("digest", digestOf(md5));
                meta.put("length", (long) data.length);
                meta.put("stub", true);
            } else if (a.path("follows").asBoolean(false)) {
                throw StorageException.badRequest("Attachment " + name + " follows, but the request is not multipart/related");
            } else {
                throw StorageException.badRequest("Attachment " + name + " needs data or stub");
            }
            metas.set(name, meta);
            digests.add(new RevHasher.AttachmentDigest(name, meta.path("content_type").asText(null), meta.get("digest").asText()));
        }
        ObjectNode stored = hashBody.deepCopy();
        stored.set("_attachments", metas);
        return new Resolved(stored, digests, hashBody);
    }

    private static ObjectNode stubFrom(List<ObjectNode> parents, String name, JsonNode stub) {
        for (ObjectNode p : parents) {
            JsonNode m = p == null ? null : p.path("_attachments").get(name);
            if (m == null || !m.isObject()) continue;
            JsonNode digest = stub.get("digest");
            if (digest != null && digest.isTextual() && !digest.textValue().equals(m.path("digest").asText())) continue;
            return ((ObjectNode) m).deepCopy();
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
