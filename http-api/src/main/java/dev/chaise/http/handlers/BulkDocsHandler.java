package dev.chaise.http.handlers;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.LocalDoc;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.UpdateResult;
import dev.chaise.storage.StorageException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code POST /{db}/_bulk_docs}. As in CouchDB, a document that cannot be parsed fails the whole
 * request (400); a document that cannot be written gets an error row. {@code all_or_nothing}
 * writes every document in one transaction or none: CouchDB 3 answers it with 417
 * {@code not_implemented} for every document; here it works, and 417 lists the documents that
 * would have failed.
 */
public final class BulkDocsHandler {
    private final Access access;

    private final Uuids uuids;

    private final dev.chaise.http.metrics.HttpdStats counts;

    public BulkDocsHandler(Access access, Uuids uuids) {
        this.access = access;
        this.counts = dev.chaise.http.metrics.HttpdStats.of(access.stats());
        this.uuids = uuids;
    }

    public void register(Router r) {
        r.add("POST", "/{db}/_bulk_docs", this::bulkDocs);
    }

    /** One document of the request: a document to write, or a {@code _local} one. */
    private record Item(String id, String rev, DocUpdate update, DocumentJson.LocalUpdate local) {}

    /** One row of the answer: a document written ({@code error} null) or refused. */
    record Row(String id, String rev, String error, String reason) {
        static Row ok(String id, String rev) {
            return new Row(id, rev, null, null);
        }

        boolean isOk() {
            return error == null;
        }
    }

    private Response bulkDocs(Request req) {
        counts.bulkRequests().increment();
        SecuredDb db = access.database(req, SecuredDb.Level.MEMBER);
        Bodies.requireContentType(req, Response.JSON);
        ObjectNode body = Bodies.jsonObject(req);
        JsonNode list = body.get("docs");
        if (list == null) throw HttpError.badRequest("POST body must include `docs` parameter.");
        if (!list.isArray()) throw HttpError.badRequest("`docs` parameter must be an array.");
        JsonNode ne = body.get("new_edits");
        if (ne != null && !ne.isBoolean()) throw HttpError.badRequest("`new_edits` parameter must be a boolean.");
        boolean newEdits = ne == null || ne.booleanValue();
        counts.bulkDocs().record(list.size());
        boolean allOrNothing = body.path("all_or_nothing").isBoolean() && body.get("all_or_nothing").booleanValue();

        List<Item> items = new ArrayList<>(list.size());
        for (JsonNode doc : list) {
            if (doc.isObject() && doc.path("_id").isTextual() && DocumentJson.isLocal(doc.get("_id").textValue())) {
                DocumentJson.LocalUpdate u = DocumentJson.parseLocal(doc, null);
                DocSupport.checkLocalRev(u.rev());
                items.add(new Item(u.id(), u.rev(), null, u));
                continue;
            }
            DocumentJson.Parsed p = DocumentJson.parse(doc, null); // any failure fails the request, as CouchDB
            if (p.id() != null) db.validateDocId(p.id());
            else p = p.withId(uuids.next());
            db.requirePartition(p.id()); // a generated id has no partition
            if (!newEdits && p.rev() == null) {
                throw HttpError.badRequest(DocSupport.NEEDS_REV);
            }
            String rev = p.rev() == null ? null : p.rev().toString();
            items.add(new Item(p.id(), rev, DocumentJson.toUpdate(p, newEdits), null));
        }

        List<DocUpdate> updates = new ArrayList<>();
        for (Item it : items) if (it.update() != null) updates.add(it.update());
        Row[] rows = new Row[items.size()];
        boolean failed = false;
        // The database applies its rules to each document (design documents' writers, the system
        // databases', validate_doc_update): a refused one comes back with its error.
        List<UpdateResult> results = updates.isEmpty() ? List.of()
                : allOrNothing ? db.updateAllOrNothing(updates, newEdits)
                : db.update(updates, newEdits);
        int k = 0;
        for (int i = 0; i < items.size(); i++) {
            Item it = items.get(i);
            if (it.update() == null) continue;
            UpdateResult r = results.get(k++);
            if (r.ok() && r.rev() == null) continue; // all_or_nothing stopped before writing: only failures are listed
            if (r.ok()) {
                rows[i] = Row.ok(it.id(), r.rev().toString());
            } else {
                rows[i] = new Row(it.id(), newEdits ? null : it.rev(), r.error().error(), r.error().reason());
                failed = true;
            }
        }
        if (allOrNothing && failed) return aborted(items, rows);
        // Local documents last, so an aborted all_or_nothing leaves them alone too.
        for (int i = 0; i < items.size(); i++) {
            DocumentJson.LocalUpdate u = items.get(i).local();
            if (u == null) continue;
            try {
                LocalDoc d = db.writeLocal(u.id(), u.rev(), u.deleted(), u.body());
                rows[i] = Row.ok(u.id(), d.rev());
            } catch (StorageException e) {
                rows[i] = new Row(u.id(), null, e.error(), e.reason());
            }
        }
        List<Row> out = new ArrayList<>(rows.length);
        for (Row row : rows) {
            if (!newEdits && row.isOk()) continue; // replicated writes report only failures, as CouchDB 3
            out.add(row);
        }
        return answer(201, out);
    }

    /** 417 with the failures only, each naming the revision it was sent with, as CouchDB's aborted list. */
    private static Response aborted(List<Item> items, Row[] rows) {
        List<Row> out = new ArrayList<>();
        for (int i = 0; i < rows.length; i++) {
            Row row = rows[i];
            if (row == null || row.isOk()) continue;
            out.add(new Row(items.get(i).id(), items.get(i).rev(), row.error(), row.reason()));
        }
        return answer(417, out);
    }

    /**
     * The rows as CouchDB's list ({@code {"ok":true,"id","rev"}} or {@code {"id","rev","error","reason"}},
     * an absent id or rev left out), written straight to bytes: a tree of a thousand rows first
     * took twice as long, on the request's path after its commit, and Jackson's generator a third
     * more than this (its per-string and per-byte bookkeeping).
     */
    static byte[] render(List<Row> rows) {
        Out out = new Out(80 * rows.size() + 4);
        out.put('[');
        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            if (i > 0) out.put(',');
            out.put('{');
            boolean first = true;
            if (r.isOk()) {
                out.put(OK);
                first = false;
            }
            if (r.id() != null) first = out.field(first, ID, r.id());
            if (r.rev() != null) first = out.field(first, REV, r.rev());
            if (!r.isOk()) {
                first = out.field(first, ERROR, r.error());
                out.field(first, REASON, r.reason());
            }
            out.put('}');
        }
        out.put(']');
        out.put('\n');
        return out.bytes();
    }

    private static final byte[] OK = ascii("\"ok\":true");
    private static final byte[] ID = ascii("\"id\":");
    private static final byte[] REV = ascii("\"rev\":");
    private static final byte[] ERROR = ascii("\"error\":");
    private static final byte[] REASON = ascii("\"reason\":");
    private static final byte[] NULL = ascii("null");

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** The answer's bytes as they are written, in one array grown as needed. */
    private static final class Out {
        private byte[] b;
        private int n;

        Out(int capacity) {
            b = new byte[capacity];
        }

        private void room(int more) {
            if (n + more > b.length) b = Arrays.copyOf(b, Math.max(n + more, 2 * b.length));
        }

        void put(char c) {
            room(1);
            b[n++] = (byte) c;
        }

        void put(byte[] bytes) {
            room(bytes.length);
            System.arraycopy(bytes, 0, b, n, bytes.length);
            n += bytes.length;
        }

        /** {@code name} (with its quotes and colon) and the value (a comma first unless {@code first}); false, for the next field. */
        boolean field(boolean first, byte[] name, String value) {
            if (!first) put(',');
            put(name);
            if (value == null) {
                put(NULL);
                return false;
            }
            put('"');
            // Printable ASCII with no quote or backslash is copied as it is; any other string is
            // escaped by Jackson's encoder, as Jackson's generator escapes it.
            int start = n;
            room(value.length());
            for (int i = 0, len = value.length(); i < len; i++) {
                char c = value.charAt(i);
                if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
                    n = start;
                    put(JsonStringEncoder.getInstance().quoteAsUTF8(value));
                    break;
                }
                b[n++] = (byte) c;
            }
            put('"');
            return false;
        }

        byte[] bytes() {
            return n == b.length ? b : Arrays.copyOf(b, n);
        }
    }

    private static Response answer(int status, List<Row> rows) {
        return Response.jsonWritten(status, render(rows));
    }
}
