package dev.chaise.views.validate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.ByDesignStamp;
import dev.chaise.storage.DbHandle;
import dev.chaise.storage.DbReader;
import dev.chaise.storage.DocInfo;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.DocumentValidator;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import dev.chaise.storage.RevId;
import dev.chaise.views.index.ViewException;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.js.JsFunctionException;
import dev.chaise.views.js.ValidateProgram;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * CouchDB's {@code validate_doc_update}: every design document of a database that has one is a
 * check every other document write must pass, in design document id order, with
 * {@code (newDoc, oldDoc, userCtx, secObj)} and the design document as {@code this}. Throwing
 * {@code {forbidden: msg}} fails the document with 403, {@code {unauthorized: msg}} with 401;
 * throwing anything else, or an {@code Error}, fails it with 500 {@code unknown_error}, as in CouchDB; one
 * that does not compile, with 500 {@code compilation_error}.
 *
 * <p>Runs inside each write transaction ({@link DocumentValidator}): a snapshot read of the
 * database's design document ids finds the functions, so a database without any pays one small
 * range read per transaction. Bodies are read again only when a design document's revision changes.
 */
public final class ValidateDocUpdate {
    private final JsEngine js;
    /** The function-bearing design documents seen, by database uuid and id; a new revision replaces its entry. */
    private final Map<Key, Seen> seen = new ConcurrentHashMap<>();

    private record Key(String dbUuid, String ddocId) {}

    private static final int SEEN_LIMIT = 10_000;

    /** Each database's functions, read again only after a design document write (2.6 % of a PUT's samples, issue 27). */
    private final ByDesignStamp<List<ObjectNode>> byDatabase = new ByDesignStamp<>();

    /** @param ddoc the design document as {@code this}, or null if it has no validate_doc_update */
    private record Seen(RevId rev, ObjectNode ddoc) {}

    private final dev.chaise.stats.Counter rejects;
    private final dev.chaise.stats.Histogram processTime;

    /** @param js null: a database with validate_doc_update functions then refuses writes (500) */
    public ValidateDocUpdate(JsEngine js, dev.chaise.stats.Stats stats) {
        this.js = js;
        this.rejects = stats.counter("couchdb.query_server.vdu_rejects", "number of documents a validate_doc_update function refused");
        this.processTime = stats.histogram("couchdb.query_server.vdu_process_time", "milliseconds to run a document's validate_doc_update functions");
    }

    /** The checks of one request, made by {@code name} (null: anonymous) with {@code roles}. */
    public DocumentValidator forUser(String name, List<String> roles) {
        return snapshot -> open(snapshot, name, roles);
    }

    private DocumentValidator.Checks open(DbReader snapshot, String name, List<String> roles) {
        DbHandle db = snapshot.handle();
        List<ObjectNode> ddocs = functions(snapshot);
        if (ddocs.isEmpty()) return null;
        ObjectNode ctx = Json.NODES.objectNode();
        ctx.put("db", db.name());
        ctx.put("name", name);
        roles.forEach(ctx.putArray("roles")::add);
        String ctxJson = ctx.toString();
        String secJson = db.securityJson() == null || db.securityJson().isBlank() ? "{}" : db.securityJson();
        return new DocumentValidator.Checks() {
            /** Opened on the first document, then reused: the programs belong to this thread. */
            private final List<ValidateProgram> programs = new ArrayList<>();
            private long nanos;

            @Override
            public void check(ObjectNode newDoc, Supplier<ObjectNode> oldDoc) {
                if (js == null) throw failed("validate_doc_update functions need the JavaScript engine, which this server runs without");
                long begin = System.nanoTime();
                try {
                    run(newDoc, oldDoc);
                } finally {
                    processTime.recordNanos(System.nanoTime() - begin); // couch_db: every function of one document
                }
            }

            private void run(ObjectNode newDoc, Supplier<ObjectNode> oldDoc) {
                String newJson = newDoc.toString();
                String oldJson = null;
                for (int i = 0; i < ddocs.size(); i++) {
                    ObjectNode ddoc = ddocs.get(i);
                    try {
                        if (programs.size() == i) programs.add(js.validateProgram(new JsEngine.DesignSource(ddoc.get("_id").textValue(), ddoc)));
                        if (oldJson == null) {
                            ObjectNode old = oldDoc.get();
                            oldJson = old == null ? "null" : old.toString();
                        }
                        long start = System.nanoTime();
                        JsonNode thrown;
                        try {
                            thrown = programs.get(i).validate(newJson, oldJson, ctxJson, secJson);
                        } finally {
                            nanos += System.nanoTime() - start;
                        }
                        if (nanos > BUDGET_NANOS) throw overBudget();
                        if (thrown != null) {
                            rejects.increment();
                            throw verdict(thrown);
                        }
                    } catch (JsFunctionException e) {
                        if (JsEngine.stoppedByEngine(e.error())) {
                            throw new ViewException(ViewException.Kind.OS_PROCESS_ERROR,
                                    "validate_doc_update of " + ddoc.get("_id").textValue() + ": " + e.reason());
                        }
                        // couch_query_servers: a function that does not compile is {compilation_error, Msg}, 500.
                        if (e.error().equals("compilation_error")) throw new StorageException(StorageException.Kind.COMPILATION_ERROR, e.reason());
                        throw failed(e.reason());
                    }
                }
            }

            @Override
            public void close() {
                for (ValidateProgram p : programs) p.close();
            }
        };
    }

    /**
     * The time the functions may take in one write transaction, all documents together: past it
     * the request fails rather than the transaction, which FoundationDB ends at 5 s and the retry
     * loop would only run again. A batch that needs more should be smaller.
     */
    static final long BUDGET_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(3);

    private static ViewException overBudget() {
        return new ViewException(ViewException.Kind.OS_PROCESS_ERROR,
                "validate_doc_update functions ran over " + java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(BUDGET_NANOS)
                        + " s for one transaction's documents; send fewer documents per request");
    }

    /**
     * The database's design documents with a validate_doc_update string, in id order, as
     * {@code reader} (a write's transaction, with the handle read in it) sees them.
     */
    private List<ObjectNode> functions(DbReader reader) {
        DbHandle db = reader.handle();
        return byDatabase.get(db, () -> read(reader, db));
    }

    private List<ObjectNode> read(DbReader reader, DbHandle db) {
        List<DocInfo> rows = reader.designDocs();
        if (rows.isEmpty()) return List.of();
        List<ObjectNode> out = new ArrayList<>(1);
        for (DocInfo row : rows) {
            Key key = new Key(db.uuid(), row.id());
            Seen s = seen.get(key);
            if (s == null || !s.rev().equals(row.rev())) {
                ObjectNode ddoc = DocumentJson.render(reader.get(row.id(), row.rev(), false));
                s = new Seen(row.rev(), ddoc.path("validate_doc_update").isTextual() ? ddoc : null);
                if (seen.size() >= SEEN_LIMIT) seen.clear(); // deleted databases and design documents leave entries behind
                seen.put(key, s);
            }
            if (s.ddoc() != null) out.add(s.ddoc());
        }
        return List.copyOf(out);
    }

    /** What the function threw, as CouchDB's couch_query_servers reads it. */
    static StorageException verdict(JsonNode thrown) {
        if (thrown.isObject() && thrown.size() == 1) {
            Map.Entry<String, JsonNode> e = thrown.properties().iterator().next();
            String reason = text(e.getValue());
            return switch (e.getKey()) {
                case "forbidden" -> new StorageException(StorageException.Kind.FORBIDDEN, reason);
                case "unauthorized" -> new StorageException(StorageException.Kind.UNAUTHORIZED, reason);
                default -> failed(reason);
            };
        }
        return failed(text(thrown));
    }

    private static String text(JsonNode n) {
        return n.isTextual() ? n.textValue() : Json.write(n);
    }

    private static StorageException failed(String reason) {
        return new StorageException(StorageException.Kind.VALIDATION_FAILED, reason);
    }
}
