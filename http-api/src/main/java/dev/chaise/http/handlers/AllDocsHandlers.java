package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.ResponseStream;
import dev.chaise.http.Router;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.Cursor;
import dev.chaise.storage.Database;
import dev.chaise.storage.DbInfo;
import dev.chaise.storage.DbReader;
import dev.chaise.storage.DocInfo;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.DocumentJson.Meta;
import dev.chaise.storage.LocalDoc;
import dev.chaise.storage.ScanProperties;
import dev.chaise.storage.Sequence;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.json.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;

/**
 * {@code _all_docs}, {@code _design_docs} and {@code _local_docs} (GET, and POST with a body of
 * parameters and {@code keys}). Rows stream as they are read, across as many transactions as the
 * range needs. {@code total_rows} comes from the document counter (RFC B); there is no
 * {@code offset} (RFC B), and {@code _local_docs} has {@code total_rows: null} as in CouchDB.
 */
public final class AllDocsHandlers {
    static final String DESIGN_FIRST = DocumentJson.DESIGN_PREFIX;
    static final String DESIGN_END = DocumentJson.DESIGN_END;
    private static final int KEYS_PER_TRANSACTION = 100;

    private enum Namespace { ALL, DESIGN, LOCAL }

    private final Access access;
    private final QueryLimits limits;

    public AllDocsHandlers(Access access, dev.chaise.http.config.ConfigStore config) {
        this.access = access;
        this.limits = new QueryLimits(config);
    }

    public void register(Router r) {
        register(r, "/{db}/_all_docs", Namespace.ALL);
        register(r, "/{db}/_design_docs", Namespace.DESIGN);
        register(r, "/{db}/_local_docs", Namespace.LOCAL);
    }

    private void register(Router r, String path, Namespace ns) {
        r.add("GET", path, req -> list(req, ns, null));
        r.add("POST", path, req -> {
            Bodies.requireContentType(req, Response.JSON);
            return list(req, ns, Bodies.jsonObject(req));
        });
        r.add("POST", path + "/queries", req -> queries(req, ns));
    }

    private Response list(Request req, Namespace ns, ObjectNode body) {
        SecuredDb db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        Database database = db.database();
        AllDocsArgs a = AllDocsArgs.parse(req, body, false, ns == Namespace.ALL && database.partitioned(), limits);
        DbInfo info = database.info();
        boolean mine = accessible(db, ns);
        Long total = mine ? Long.valueOf(db.info().docCount()) : total(database, ns, info);
        return Response.jsonStream(200, out -> write(out, db, ns, a, total, info, mine));
    }

    /**
     * {@code POST .../queries}, as chttpd's multi_all_docs_view: each query of {@code queries}
     * runs as if alone, its members over the query string's parameters, and the results come in
     * the same order under {@code results}.
     */
    private Response queries(Request req, Namespace ns) {
        SecuredDb db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        ObjectNode body = Bodies.jsonObject(req);
        JsonNode qs = body.get("queries");
        if (qs == null) throw dev.chaise.http.HttpError.badRequest("POST body must include `queries` parameter.");
        if (!qs.isArray()) throw dev.chaise.http.HttpError.badRequest("`queries` member must be an array.");
        List<AllDocsArgs> parsed = new ArrayList<>();
        for (JsonNode one : qs) {
            if (!one.isObject()) throw dev.chaise.http.HttpError.badRequest("Each query must be an object.");
            parsed.add(AllDocsArgs.parse(req, (ObjectNode) one, true, ns == Namespace.ALL && db.database().partitioned(), limits));
        }
        Database database = db.database();
        DbInfo info = database.info();
        boolean mine = accessible(db, ns);
        Long total = mine ? Long.valueOf(db.info().docCount()) : total(database, ns, info);
        return Response.jsonStream(200, out -> {
            out.write("{\"results\":[\r\n");
            for (int i = 0; i < parsed.size(); i++) {
                if (i > 0) out.write(",\r\n");
                write(out, db, ns, parsed.get(i), total, info, mine);
            }
            out.write("\r\n]}");
        });
    }

    private static Long total(Database database, Namespace ns, DbInfo info) {
        return switch (ns) {
            case ALL -> info.docCount();
            case DESIGN -> countDesignDocs(database);
            case LOCAL -> null; // CouchDB does not count them either
        };
    }

    /** {@code _all_docs}' rows as they are read, for a list function over {@code _all_docs}. */
    static Iterator<ObjectNode> allDocsRows(SecuredDb db, AllDocsArgs a) {
        return a.keys() != null ? keyRows(db, Namespace.ALL, a) : rangeRows(db, Namespace.ALL, a);
    }

    /** One result object: {@code total_rows}, {@code update_seq} if asked, and the rows as they are read. */
    private static void write(ResponseStream out, SecuredDb db, Namespace ns, AllDocsArgs a, Long total, DbInfo info, boolean mine)
            throws Exception {
        StringBuilder head = new StringBuilder("{\"total_rows\":").append(total);
        if (a.updateSeq()) head.append(",\"update_seq\":\"").append(info.updateSeq() == null ? "0" : info.updateSeq().toHex()).append('"');
        out.write(head.append(",\"rows\":[\r\n").toString());
        Iterator<ObjectNode> rows = mine ? accessRows(db, a) : a.keys() != null ? keyRows(db, ns, a) : rangeRows(db, ns, a);
        boolean first = true;
        while (rows.hasNext()) {
            ObjectNode row = rows.next();
            if (!first) out.write(",\r\n");
            out.write(Json.MAPPER.writeValueAsBytes(row));
            first = false;
        }
        out.write("\r\n]}");
    }

    // ---------------------------------------------------------------- one user's documents in an access database

    /**
     * Whether this is a user an access database limits ({@link SecuredDb#limitedByAccess}): their
     * {@code _all_docs} is their own documents alone, from the database's listings by principal,
     * counted by itself ({@link SecuredDb#info}): no other document, not even the database's
     * count, shows through.
     */
    private static boolean accessible(SecuredDb db, Namespace ns) {
        return ns == Namespace.ALL && db.limitedByAccess();
    }

    /**
     * {@link #rangeRows} and {@link #keyRows} over the user's documents, with every option: a
     * range is their listings merged as the client takes the rows (a limit reads about that many
     * of each), keys are looked up in their listings; rows mapped a transaction per {@link #KEYS_PER_TRANSACTION}.
     */
    private static Iterator<ObjectNode> accessRows(SecuredDb sdb, AllDocsArgs a) {
        if (a.keys() != null) {
            List<java.util.function.Function<DbReader, ObjectNode>> rows = new ArrayList<>();
            for (JsonNode k : page(a.keys(), a)) {
                rows.add(r -> {
                    DocInfo d = k.isTextual() ? sdb.accessibleDoc(r, k.textValue()) : null;
                    return d == null ? missingRow(k) : d.deleted() ? deletedRow(d, a) : row(sdb, r, d, a);
                });
            }
            return batched(sdb.database(), rows.iterator());
        }
        Bounds b = bounds(Namespace.ALL, a);
        if (b == null || a.limit() == 0) return java.util.Collections.emptyIterator();
        long max = a.limit() == Long.MAX_VALUE ? 0 : a.limit() + a.skip();
        Iterator<DocInfo> docs = sdb.accessibleDocs(a.partition(), new Database.IdRange(b.start(), b.end(), a.inclusiveEnd()),
                ScanProperties.of(a.descending(), max));
        for (long i = 0; i < a.skip() && docs.hasNext(); i++) docs.next();
        return batched(sdb.database(), new Iterator<>() {
            public boolean hasNext() {
                return docs.hasNext();
            }

            public java.util.function.Function<DbReader, ObjectNode> next() {
                DocInfo d = docs.next();
                return r -> row(sdb, r, d, a);
            }
        });
    }

    /**
     * The rows {@code rows} read, in order, {@link #KEYS_PER_TRANSACTION} to a snapshot transaction,
     * as the client takes them ({@code rows} itself is taken outside those transactions).
     */
    private static Iterator<ObjectNode> batched(Database db, Iterator<java.util.function.Function<DbReader, ObjectNode>> rows) {
        return new Iterator<>() {
            final List<ObjectNode> batch = new ArrayList<>();
            int pos;

            public boolean hasNext() {
                if (pos < batch.size()) return true;
                if (!rows.hasNext()) return false;
                List<java.util.function.Function<DbReader, ObjectNode>> chunk = new ArrayList<>(KEYS_PER_TRANSACTION);
                while (chunk.size() < KEYS_PER_TRANSACTION && rows.hasNext()) chunk.add(rows.next());
                batch.clear();
                pos = 0;
                batch.addAll(db.read(r -> chunk.stream().map(f -> f.apply(r)).toList()));
                return true;
            }

            public ObjectNode next() {
                if (!hasNext()) throw new java.util.NoSuchElementException();
                return batch.get(pos++);
            }
        };
    }

    // ---------------------------------------------------------------- ranges

    private static Iterator<ObjectNode> rangeRows(SecuredDb sdb, Namespace ns, AllDocsArgs a) {
        Database db = sdb.database();
        Bounds b = bounds(ns, a);
        if (b == null || a.limit() == 0) return java.util.Collections.emptyIterator();
        long max = a.limit() == Long.MAX_VALUE ? 0 : a.limit() + a.skip();
        Database.IdRange range = new Database.IdRange(b.start(), b.end(), a.inclusiveEnd());
        ScanProperties props = ScanProperties.of(a.descending(), max);
        Iterator<ObjectNode> rows;
        if (ns == Namespace.LOCAL) {
            Cursor<LocalDoc> c = db.localDocs(range, props, null, a.includeDocs());
            rows = new Iterator<>() {
                public boolean hasNext() {
                    return c.hasNext();
                }

                public ObjectNode next() {
                    return localRow(c.next(), a);
                }
            };
        } else {
            rows = db.allDocs(a.partition(), range, props, null, (r, d) -> row(sdb, r, d, a));
        }
        for (long i = 0; i < a.skip() && rows.hasNext(); i++) rows.next();
        return rows;
    }

    /** The range's ends as ids (null: open), or null for a range no document id can fall in. */
    record Bounds(String start, String end) {}

    /**
     * Non-string keys sort before every id (CouchDB compares ids as Erlang terms, where any JSON
     * value but a string is smaller than a binary), so they open or empty the range.
     */
    static Bounds bounds(Namespace ns, AllDocsArgs a) {
        JsonNode s = a.startKey();
        JsonNode e = a.endKey();
        boolean d = a.descending();
        String start;
        String end;
        if (s == null) start = null;
        else if (s.isTextual()) start = s.textValue();
        else if (d) return null; // descending from below every id
        else start = null;
        if (e == null) end = null;
        else if (e.isTextual()) end = e.textValue();
        else if (!d) return null; // ascending to below every id
        else end = null;
        if (ns == Namespace.DESIGN) {
            // Clamp to the design namespace.
            if (!d) {
                start = start == null ? DESIGN_FIRST : max(start, DESIGN_FIRST);
                end = end == null ? DESIGN_END : min(end, DESIGN_END);
                if (compare(start, end) > 0) return null;
            } else {
                start = start == null ? DESIGN_END : min(start, DESIGN_END);
                end = end == null ? DESIGN_FIRST : max(end, DESIGN_FIRST);
                if (compare(start, end) < 0) return null;
            }
        }
        return new Bounds(start, end);
    }

    /** Ids compare as their UTF-8 bytes, as the keys that hold them do. */
    static int compare(String a, String b) {
        return Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }

    private static String max(String a, String b) {
        return compare(a, b) >= 0 ? a : b;
    }

    private static String min(String a, String b) {
        return compare(a, b) <= 0 ? a : b;
    }

    private static ObjectNode row(SecuredDb db, DbReader r, DocInfo d, AllDocsArgs a) {
        ObjectNode row = Json.NODES.objectNode().put("id", d.id()).put("key", d.id());
        row.putObject("value").put("rev", d.rev().toString());
        if (a.includeDocs()) {
            StoredDoc doc = r.get(d.id(), d.rev(), a.conflicts());
            ObjectNode rendered = db.renderOrNull(doc, new Meta(false, false, a.conflicts(), false, false));
            if (rendered != null) {
                r.inlineAttachments(doc, rendered, a.attachments() ? 0 : -1);
                if (a.attEncodingInfo()) DocumentJson.showEncoding(doc, rendered);
            }
            row.set("doc", rendered == null ? Json.NODES.nullNode() : rendered);
        }
        return row;
    }

    private static ObjectNode localRow(LocalDoc d, AllDocsArgs a) {
        ObjectNode row = Json.NODES.objectNode().put("id", d.id()).put("key", d.id());
        row.putObject("value").put("rev", d.rev());
        if (a.includeDocs()) row.set("doc", DocumentJson.render(d));
        return row;
    }

    private static long countDesignDocs(Database db) {
        Cursor<Boolean> c = db.allDocs(new Database.IdRange(DESIGN_FIRST, DESIGN_END, false), ScanProperties.FORWARD, null, (r, d) -> Boolean.TRUE);
        long n = 0;
        while (c.hasNext()) {
            c.next();
            n++;
        }
        return n;
    }

    // ---------------------------------------------------------------- keys

    /** {@code items} reversed when descending, then skip and limit. */
    private static <T> List<T> page(List<T> items, AllDocsArgs a) {
        List<T> in = new ArrayList<>(items);
        if (a.descending()) java.util.Collections.reverse(in);
        int from = (int) Math.min(a.skip(), in.size());
        int to = (int) Math.min(in.size(), from + Math.min(a.limit(), Integer.MAX_VALUE));
        return in.subList(from, to);
    }

    /** As fabric: keys reversed when descending, then skip and limit, then the namespace's filter. */
    private static Iterator<ObjectNode> keyRows(SecuredDb sdb, Namespace ns, AllDocsArgs a) {
        List<java.util.function.Function<DbReader, ObjectNode>> rows = new ArrayList<>();
        for (JsonNode k : page(a.keys(), a)) {
            boolean keep = switch (ns) {
                case ALL -> true;
                case DESIGN -> k.isTextual() && k.textValue().startsWith(DocumentJson.DESIGN_PREFIX);
                case LOCAL -> k.isTextual() && DocumentJson.isLocal(k.textValue());
            };
            if (keep) rows.add(r -> keyRow(sdb, r, k, a));
        }
        return batched(sdb.database(), rows.iterator());
    }

    private static ObjectNode missingRow(JsonNode k) {
        ObjectNode missing = Json.NODES.objectNode();
        missing.set("key", k);
        missing.put("error", "not_found");
        return missing;
    }

    private static ObjectNode deletedRow(DocInfo d, AllDocsArgs a) {
        ObjectNode row = Json.NODES.objectNode().put("id", d.id()).put("key", d.id());
        row.putObject("value").put("rev", d.rev().toString()).put("deleted", true);
        if (a.includeDocs()) row.putNull("doc");
        return row;
    }

    private static ObjectNode keyRow(SecuredDb sdb, DbReader r, JsonNode k, AllDocsArgs a) {
        ObjectNode missing = missingRow(k);
        if (!k.isTextual()) return missing;
        String id = k.textValue();
        if (DocumentJson.isLocal(id)) {
            LocalDoc d = r.local(id);
            return d == null ? missing : localRow(d, a);
        }
        DocInfo d = r.winner(id);
        if (d == null) return missing;
        if (d.deleted()) return deletedRow(d, a);
        return row(sdb, r, d, a);
    }

    static String seq(Sequence s) {
        return s == null ? "0" : s.toHex();
    }
}
