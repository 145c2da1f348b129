package dev.chaise.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.storage.RevisionsSubspace.Branch;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.SequenceInputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Attachment bodies that do not travel inside their document's transaction: bodies over a
 * megabyte are stored ahead, streamed a megabyte per transaction (see {@link AttachmentsSubspace}),
 * gzipped as they stream when their type is compressible ({@link AttachmentCompression}); and the
 * sweep that {@code _compact} runs. Small bodies are written by the document's own write.
 */
final class AttachmentStore {
    /** Attachments up to this size go inline in their document's transaction; larger ones are stored ahead. */
    static final int INLINE_ATTACHMENT_BYTES = AttachmentsSubspace.CHUNK * AttachmentsSubspace.CHUNKS_PER_TX;
    private static final int LARGE_INLINE_CHARS = INLINE_ATTACHMENT_BYTES / 3 * 4;

    static final String GZIP = "gzip";

    private final Storage storage;

    AttachmentStore(Storage storage) {
        this.storage = storage;
    }

    /**
     * Stores an attachment body ahead of the document that will name it, as sent (no encoding):
     * see {@link #storeBytes}.
     */
    StoredAttachment store(Database db, String docId, String name, InputStream in) {
        Stored s = storeBytes(db, docId, limited(in, name));
        return new StoredAttachment(s.digest(), s.length());
    }

    /** Stores identity bytes of {@code contentType} ahead: gzipped as they stream if the type is compressible. */
    private StoredAttachment storeIdentity(Database db, String docId, String name, InputStream in, String contentType) {
        int level = storage.compression().levelFor(contentType);
        if (level == 0) return store(db, docId, name, in);
        Gzip.Encoder gz = Gzip.encode(limited(in, name), level);
        Stored s = storeBytes(db, docId, gz);
        return new StoredAttachment(s.digest(), gz.identityLength(), GZIP, s.length());
    }

    /**
     * Stores bytes that came gzipped (a replicator's encoded part) as they are; {@code length} is
     * their identity length as the sender gives it, or negative if unknown (then the stored length
     * stands for it, as CouchDB does).
     */
    private StoredAttachment storeGzipped(Database db, String docId, String name, InputStream in, long length) {
        Stored s = storeBytes(db, docId, limited(in, name));
        // Read back once, so a body that is not gzip is refused now rather than failing every read
        // later (its chunks, named by no revision, go at the next sweep).
        try (InputStream check = Gzip.decode(new ChunkStream(db, docId, s.digest()))) {
            check.transferTo(OutputStream.nullOutputStream());
        } catch (IOException | UncheckedIOException e) {
            throw StorageException.badRequest("Attachment " + name + " is not valid gzip");
        }
        return new StoredAttachment(s.digest(), length < 0 ? s.length() : length, GZIP, s.length());
    }

    private record Stored(String digest, long length) {}

    /**
     * Stores bytes ahead of the document that will name them, reading {@code in} to its end a
     * megabyte at a time: streamed into a staging range, one transaction per megabyte, then moved
     * under their md5. Nothing holds the whole body, and no transaction comes near FDB's size
     * limit. On any failure (413 {@code attachment_too_large} from {@link #limited} too) the
     * staged chunks are cleared.
     */
    private Stored storeBytes(Database db, String docId, InputStream in) {
        AttachmentsSubspace.Upload upload = AttachmentsSubspace.Upload.next();
        MessageDigest md5 = AttachmentsSubspace.newMd5();
        long length = 0;
        long chunks = 0;
        boolean done = false;
        try {
            while (true) {
                List<byte[]> batch = new ArrayList<>(AttachmentsSubspace.CHUNKS_PER_TX);
                boolean end = false;
                while (batch.size() < AttachmentsSubspace.CHUNKS_PER_TX) {
                    byte[] c = in.readNBytes(AttachmentsSubspace.CHUNK);
                    length += c.length;
                    if (c.length > 0) {
                        md5.update(c);
                        batch.add(c);
                    }
                    if (c.length < AttachmentsSubspace.CHUNK) {
                        end = true;
                        break;
                    }
                }
                long first = chunks;
                if (!batch.isEmpty()) {
                    // after a 1021, writing the same chunks again is harmless
                    idempotent(db, (tx, h) -> AttachmentsSubspace.writeUpload(tx, h, upload, first, batch));
                }
                chunks += batch.size();
                if (end) break;
            }
            byte[] digest = md5.digest();
            long total = chunks;
            for (long from = 0; from < total; from += AttachmentsSubspace.CHUNKS_PER_TX) {
                long f = from;
                idempotent(db, (tx, h) -> AttachmentsSubspace.moveUpload(tx, h, upload, f, total, docId, digest)); // a move that did commit is found done
            }
            if (total == 0) { // an empty body has one empty chunk, as inline data does
                idempotent(db, (tx, h) -> AttachmentsSubspace.write(tx, h, docId, digest, new byte[0]));
            }
            done = true;
            storage.timer().add(StorageCounts.ATTACHMENT_BYTES_WRITTEN, length);
            return new Stored(AttachmentsSubspace.digestOf(digest), length);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (!done) clearUpload(db, upload);
        }
    }

    /** {@code in}, stopping with 413 {@code attachment_too_large} past {@code max_attachment_size} bytes. */
    private InputStream limited(InputStream in, String name) {
        long max = storage.maxAttachmentSize();
        return new java.io.FilterInputStream(in) {
            private long read;

            @Override
            public int read() throws IOException {
                int b = super.read();
                if (b >= 0) count(1);
                return b;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = super.read(b, off, len);
                if (n > 0) count(n);
                return n;
            }

            private void count(int n) {
                read += n;
                if (read > max) throw new StorageException(StorageException.Kind.ATTACHMENT_TOO_LARGE, name);
            }
        };
    }

    /** A write that may simply run again after a 1021. */
    private void idempotent(Database db, java.util.function.BiConsumer<dev.chaise.kv.Transaction, DbHandle> body) {
        storage.kv().run(tx -> {
            body.accept(tx, db.handle(tx));
            return null;
        }, tx -> Optional.empty());
    }

    /**
     * Reads an attachment's body, as it arrives, into its {@code _attachments} entry {@code meta}:
     * up to {@link #INLINE_ATTACHMENT_BYTES} becomes inline {@code data}, written (and gzipped if
     * compressible) in the document's own transaction; a larger body is stored ahead and the entry
     * is marked {@code follows}. A body the entry says is {@code "encoding": "gzip"} (what a CouchDB
     * replicator sends, COUCHDB-1923) is stored ahead as it came. Returns the stored body for
     * {@link DocUpdate#withStored}, or null.
     */
    StoredAttachment read(Database db, String docId, String name, ObjectNode meta, InputStream in) {
        meta.remove("follows");
        if (GZIP.equals(meta.path("encoding").asText(null))) {
            meta.put("follows", true);
            return storeGzipped(db, docId, name, in, meta.path("length").asLong(-1));
        }
        byte[] head;
        try {
            head = in.readNBytes(INLINE_ATTACHMENT_BYTES + 1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (head.length <= INLINE_ATTACHMENT_BYTES) {
            meta.put("data", Base64.getEncoder().encodeToString(head));
            return null;
        }
        meta.put("follows", true);
        return storeIdentity(db, docId, name, new SequenceInputStream(new ByteArrayInputStream(head), in), meta.path("content_type").asText(null));
    }

    private void clearUpload(Database db, AttachmentsSubspace.Upload upload) {
        try {
            idempotent(db, (tx, h) -> {
                byte[][] r = AttachmentsSubspace.uploadRange(h, upload);
                tx.clear(r[0], r[1]);
            });
        } catch (RuntimeException e) {
            // The sweep clears it within the hour.
        }
    }

    /**
     * Inline attachments too big for a document's transaction (over a megabyte) are stored first,
     * and the documents then name them as stored bodies. Data that is not valid base64, or over
     * {@code max_attachment_size}, stays inline, so the document's write reports it.
     */
    List<DocUpdate> storeLargeInline(Database db, List<DocUpdate> docs) {
        List<DocUpdate> out = null;
        for (int i = 0; i < docs.size(); i++) {
            DocUpdate u = docs.get(i);
            if (!(u.body().get("_attachments") instanceof ObjectNode atts)) continue;
            ObjectNode copy = null;
            Map<String, StoredAttachment> stored = new HashMap<>(u.stored());
            for (Map.Entry<String, JsonNode> e : atts.properties()) {
                JsonNode data = e.getValue().get("data");
                if (data == null || !data.isTextual() || data.textValue().length() <= LARGE_INLINE_CHARS) continue;
                byte[] bytes = AttachmentsSubspace.decode(data.textValue());
                if (bytes == null || bytes.length > storage.maxAttachmentSize()) continue;
                stored.put(e.getKey(), storeIdentity(db, u.id(), e.getKey(), new ByteArrayInputStream(bytes), e.getValue().path("content_type").asText(null)));
                if (copy == null) copy = u.body().deepCopy();
                ObjectNode meta = (ObjectNode) copy.get("_attachments").get(e.getKey());
                meta.remove("data");
                meta.put("follows", true);
            }
            if (copy == null) continue;
            if (out == null) out = new ArrayList<>(docs);
            out.set(i, u.withBody(copy).withStored(stored));
        }
        return out == null ? docs : out;
    }

    /**
     * Clears attachment chunks no leaf revision names any more, document by document (what
     * {@code _compact} reclaims), and uploads abandoned for an hour. Returns how many attachments were cleared.
     */
    int sweep(Database db) {
        long now = System.currentTimeMillis();
        idempotent(db, (tx, h) -> AttachmentsSubspace.sweepUploads(tx, h, now));
        List<String> ids = db.read(r -> {
            List<String> out = new ArrayList<>();
            byte[][] range = r.handle().space().range(KeySpace.Db.ATTACHMENTS);
            String last = null;
            for (KeyValue row : r.tx().getRangeAsList(range[0], range[1], 0, false)) {
                String id = r.handle().space().unpack(row.key()).getString(1);
                if (!id.equals(last)) out.add(id);
                last = id;
            }
            return out;
        });
        int cleared = 0;
        for (String id : ids) {
            cleared += db.run((tx, h) -> {
                List<ObjectNode> leaves = new ArrayList<>();
                for (Branch b : RevisionsSubspace.all(tx, h, id)) leaves.add(DocumentBodies.read(tx, h, id, b.branch().leaf(), b.branch().deleted()));
                return AttachmentsSubspace.sweep(tx, h, id, leaves);
            });
        }
        return cleared;
    }
}
