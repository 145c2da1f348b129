package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.Cursor;
import dev.chaise.storage.Database;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.DbReader;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.LocalDoc;
import dev.chaise.storage.RevId;
import dev.chaise.storage.ScanProperties;
import dev.chaise.storage.Sequence;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.StoredAttachment;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.UpdateResult;
import dev.chaise.storage.json.Json;
import dev.chaise.views.DocFilters;
import dev.chaise.views.index.ViewException;
import dev.chaise.views.mango.Selector;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * A database of this server as a replication peer, through storage's API: changes from a
 * {@link Cursor} (its continuation is the checkpoint's sequence), documents read at one version a
 * few dozen at a time, writes with {@code new_edits: false} through the same validate_doc_update
 * checks a request by the replication's user meets, attachment bodies streamed chunk by chunk.
 */
final class LocalPeer implements Peer {
    /** Documents read per transaction when fetching. */
    static final int DOCS_PER_TRANSACTION = 50;

    private final String name;
    private final LocalAccess access;
    private SecuredDb secured;
    private Database db;
    private final DocFilters filters;
    private final ReplicationSpec.RepUser user;

    /** Opened on first use, so a replication checks its source before its target, as CouchDB does. */
    LocalPeer(String name, LocalAccess access, DocFilters filters, ReplicationSpec.RepUser user) {
        this.name = name;
        this.access = access;
        this.filters = filters;
        this.user = user;
    }

    private synchronized void opened(SecuredDb opened) {
        secured = opened;
        db = opened.database();
    }

    private synchronized Database open() {
        if (db == null) opened(access.open(name, user));
        return db;
    }

    @Override
    public String uri() {
        return name;
    }

    @Override
    public ObjectNode info() {
        open();
        var i = guard(() -> db.info());
        ObjectNode o = Json.NODES.objectNode();
        o.put("db_name", i.name());
        o.put("update_seq", i.updateSeq() == null ? "0" : i.updateSeq().toHex());
        o.put("instance_start_time", "0");
        if (i.access()) o.putObject("props").put("access", true);
        return o;
    }

    @Override
    public String user() {
        return user.name();
    }

    @Override
    public void create(ObjectNode params) {
        opened(access.create(name, user));
    }

    @Override
    public ObjectNode getLocal(String id) {
        try {
            LocalDoc d = guard(() -> db.getLocal(id));
            return DocumentJson.render(d);
        } catch (ReplicationException e) {
            if (e.status() == 404) return null;
            throw e;
        }
    }

    @Override
    public void putLocal(String id, ObjectNode body) {
        ObjectNode b = body.deepCopy();
        b.remove("_id");
        b.remove("_rev");
        guard(() -> {
            LocalDoc current = db.read(r -> r.local(id)); // the next revision is this one's plus one, as CouchDB numbers them
            return secured.writeLocal(id, current == null ? null : current.rev(), false, b);
        });
    }

    @Override
    public ObjectNode getDoc(String id) {
        try {
            return guard(() -> secured.render(db.get(id, null, false), DocumentJson.Meta.NONE));
        } catch (ReplicationException e) {
            if (e.status() == 404) return null;
            throw e;
        }
    }

    // ---------------------------------------------------------------- changes

    static Sequence since(JsonNode since) {
        if (since == null || since.isNull()) return null;
        if (since.isNumber() && since.asLong() == 0) return null;
        if (since.isTextual() && (since.textValue().equals("0") || since.textValue().isEmpty())) return null;
        if (!since.isTextual()) throw ReplicationException.badRequest("Malformed sequence supplied in 'since' parameter.");
        try {
            return Sequence.parse(since.textValue());
        } catch (StorageException e) {
            throw ReplicationException.badRequest(e.reason());
        }
    }

    @Override
    public void changes(ChangesQuery q, ChangesSink sink) throws InterruptedException {
        open();
        Sequence last = since(q.since());
        Set<String> ids = q.docIds() == null ? null : new HashSet<>(q.docIds());
        Selector selector = q.selector() == null ? null : Selector.parse(q.selector());
        DocFilters.DocFilter js = openFilter(q);
        try {
            Predicate<ObjectNode> test = js != null ? js::test : selector != null ? selector::matches : null;
            boolean designOnly = "_design".equals(q.filter());
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(q.timeoutMs());
            while (true) {
                CompletableFuture<Void> watch = q.continuous() ? guard(() -> db.watchWrites()) : null;
                try {
                    int rows = test != null ? 100 : ScanProperties.ROWS_PER_TRANSACTION;
                    Sequence from = last;
                    Cursor<Change> c = guard(() -> db.changes(from, ScanProperties.FORWARD.rowsPerTransaction(rows),
                            (r, ch) -> map(r, ch, ids, designOnly, test, q.winningOnly())));
                    boolean any = false;
                    while (guard(c::hasNext)) {
                        Change ch = c.next();
                        sink.change(ch);
                        any = true;
                    }
                    if (c.continuation() != null) last = Sequence.fromContinuation(c.continuation());
                    if (!q.continuous()) {
                        sink.lastSeq(seqJson(last));
                        return;
                    }
                    if (any) deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(q.timeoutMs());
                    long left = deadline - System.nanoTime();
                    if (left <= 0 || !await(watch, left)) {
                        sink.lastSeq(seqJson(last));
                        return;
                    }
                } finally {
                    if (watch != null) watch.cancel(false);
                }
            }
        } finally {
            if (js != null) js.close();
        }
    }

    private static boolean await(CompletableFuture<Void> watch, long nanos) throws InterruptedException {
        try {
            watch.get(nanos, TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException | java.util.concurrent.CancellationException e) {
            Thread.sleep(Math.min(1000, TimeUnit.NANOSECONDS.toMillis(nanos))); // a failed watch: look again, not in a tight loop
            return true;
        }
    }

    private static JsonNode seqJson(Sequence s) {
        return s == null ? Json.NODES.numberNode(0) : Json.NODES.textNode(s.toHex());
    }

    private DocFilters.DocFilter openFilter(ChangesQuery q) {
        if (q.filter() == null || q.filter().equals("_design") || q.filter().equals("_doc_ids") || q.filter().equals("_selector")) return null;
        try {
            if (q.filter().equals("_view")) {
                String[] v = q.queryParams().path("view").asText().split("/", 2);
                return filters.viewFilter(db, DocumentJson.DESIGN_PREFIX + v[0], v[1]);
            }
            int slash = q.filter().indexOf('/');
            return filters.filterFunction(db, DocumentJson.DESIGN_PREFIX + q.filter().substring(0, slash), q.filter().substring(slash + 1), filterRequest(q));
        } catch (ViewException e) {
            throw new ReplicationException(404, "not_found", e.reason());
        } catch (StorageException e) {
            throw new ReplicationException(404, "not_found", "Couldn't open document `_design/" + q.filter().split("/")[0] + "` from source database `" + db.name() + "`: " + e.reason());
        }
    }

    /** The {@code req} a filter function gets, as CouchDB builds it for a replication. */
    private JsonNode filterRequest(ChangesQuery q) {
        ObjectNode r = Json.NODES.objectNode();
        r.putObject("info").put("db_name", db.name());
        r.putNull("id");
        r.put("method", "GET");
        r.putArray("path").add(db.name()).add("_changes");
        r.set("query", q.queryParams().deepCopy().put("filter", q.filter()));
        r.putObject("headers");
        r.put("body", "undefined");
        r.put("peer", "127.0.0.1");
        ObjectNode u = r.putObject("userCtx");
        u.put("db", db.name());
        if (user.name() == null) u.putNull("name");
        else u.put("name", user.name());
        ArrayNode roles = u.putArray("roles");
        user.roles().forEach(roles::add);
        return r;
    }

    /** A change row for the replicator, or null when a filter drops it. */
    private static Change map(DbReader r, dev.chaise.storage.Change ch, Set<String> ids, boolean designOnly,
                              Predicate<ObjectNode> test, boolean winningOnly) {
        String id = ch.id();
        if (ids != null && !ids.contains(id)) return null;
        if (designOnly && !id.startsWith(DocumentJson.DESIGN_PREFIX)) return null;
        List<RevId> revs;
        if (test != null) {
            StoredDoc winner = r.get(id, ch.rev(), false);
            if (!winningOnly && ch.branchCount() > 1) {
                revs = new ArrayList<>();
                for (RevId leaf : r.leaves(id)) {
                    StoredDoc d = leaf.equals(winner.rev()) ? winner : r.get(id, leaf, false);
                    if (test.test(DocumentJson.render(d))) revs.add(leaf);
                }
            } else {
                revs = test.test(DocumentJson.render(winner)) ? List.of(ch.rev()) : List.of();
            }
            if (revs.isEmpty()) return null;
        } else if (!winningOnly && ch.branchCount() > 1) {
            revs = r.leaves(id);
        } else {
            revs = List.of(ch.rev());
        }
        List<String> out = new ArrayList<>(revs.size());
        for (RevId x : revs) out.add(x.toString());
        return new Change(Json.NODES.textNode(ch.seq().toHex()), id, out, ch.deleted());
    }

    @Override
    public Long pending(JsonNode since) {
        try {
            Sequence s = since(since);
            return guard(() -> db.countChanges(s, null, 1_000_000));
        } catch (RuntimeException e) {
            return null;
        }
    }

    // ---------------------------------------------------------------- revs_diff, reads

    @Override
    public Map<String, RevsDiffEntry> revsDiff(Map<String, List<String>> revs) {
        List<String> ids = new ArrayList<>(revs.keySet());
        List<List<RevId>> asked = new ArrayList<>(ids.size());
        for (String id : ids) {
            List<RevId> l = new ArrayList<>();
            for (String rv : revs.get(id)) l.add(RevId.parse(rv));
            asked.add(l);
        }
        Map<String, RevsDiffEntry> out = new LinkedHashMap<>();
        for (Database.RevsDiff d : guard(() -> db.revsDiff(ids, asked))) {
            out.put(d.id(), new RevsDiffEntry(strings(d.missing()), strings(d.possibleAncestors())));
        }
        return out;
    }

    private static List<String> strings(List<RevId> revs) {
        List<String> out = new ArrayList<>(revs.size());
        for (RevId r : revs) out.add(r.toString());
        return out;
    }

    @Override
    public int fetch(List<Wanted> wanted, boolean bulkGet, FetchSink sink) {
        for (int i = 0; i < wanted.size(); i += DOCS_PER_TRANSACTION) {
            List<Wanted> part = wanted.subList(i, Math.min(wanted.size(), i + DOCS_PER_TRANSACTION));
            List<ObjectNode> docs = guard(() -> db.read(r -> {
                List<ObjectNode> out = new ArrayList<>();
                for (Wanted w : part) {
                    for (DbReader.OpenRev o : r.openRevs(w.id(), List.of(RevId.parse(w.rev())), true)) {
                        if (o.doc() == null) continue; // gone meanwhile (compacted away): nothing to copy
                        ObjectNode doc = secured.renderOrNull(o.doc(), new DocumentJson.Meta(true, false, false, false, false));
                        if (doc == null) continue; // not for this user to read
                        DocumentJson.showEncoding(o.doc(), doc); // for bodies(), which sends them decoded
                        doc.put("_replicator_ancestor_pos", ancestorPos(w.possibleAncestors()));
                        out.add(doc);
                    }
                }
                return out;
            }));
            for (ObjectNode doc : docs) {
                long since = doc.remove("_replicator_ancestor_pos").asLong();
                sink.accept(new Fetched(doc, bodies(doc, since)));
            }
        }
        return 0;
    }

    static long ancestorPos(List<String> possibleAncestors) {
        long max = 0;
        for (String pa : possibleAncestors) max = Math.max(max, RevId.parse(pa).pos());
        return max;
    }

    /**
     * The attachments newer than the target's ancestors, marked {@code follows}, with streams over
     * their chunks: identity bytes, gunzipped if stored gzipped, so any target takes them.
     */
    private List<AttachmentBody> bodies(ObjectNode doc, long sincePos) {
        JsonNode atts = doc.get("_attachments");
        if (atts == null || !atts.isObject()) return List.of();
        String id = doc.get("_id").textValue();
        List<AttachmentBody> out = new ArrayList<>();
        for (Map.Entry<String, JsonNode> e : atts.properties()) {
            ObjectNode meta = (ObjectNode) e.getValue();
            ObjectNode stored = meta.deepCopy();
            meta.remove(List.of("encoding", "encoded_length"));
            if (meta.path("revpos").asLong() <= sincePos) continue; // the target has it: a stub
            long length = meta.path("length").asLong(-1);
            meta.remove("stub");
            meta.put("follows", true);
            out.add(new AttachmentBody(e.getKey(), length, () -> db.attachmentStream(id, stored, true)));
        }
        return out;
    }

    // ---------------------------------------------------------------- writes

    @Override
    public List<WriteError> writeDocs(List<ObjectNode> docs) {
        List<WriteError> errors = new ArrayList<>();
        List<DocUpdate> updates = new ArrayList<>();
        List<ObjectNode> sent = new ArrayList<>();
        for (ObjectNode d : docs) {
            try {
                updates.add(prepare(d));
                sent.add(d);
            } catch (StorageException e) {
                errors.add(new WriteError(d.path("_id").asText(), d.path("_rev").asText(), e.error(), e.reason()));
            }
        }
        if (updates.isEmpty()) return errors;
        List<UpdateResult> results = guard(() -> secured.update(updates, false));
        for (int i = 0; i < results.size(); i++) {
            UpdateResult r = results.get(i);
            if (!r.ok()) errors.add(new WriteError(r.id(), sent.get(i).path("_rev").asText(), r.error().error(), r.error().reason()));
        }
        return errors;
    }

    /** A replicated document as an update; the database's rules are the door's ({@link SecuredDb#update}). */
    private static DocUpdate prepare(ObjectNode d) {
        DocumentJson.Parsed p = DocumentJson.parse(d, null);
        if (p.rev() == null) throw StorageException.badRequest("When `new_edits: false`, the document needs `_rev` or `_revisions` specified");
        return DocumentJson.toUpdate(p, false);
    }

    @Override
    public WriteError writeDoc(Fetched f) {
        ObjectNode d = f.doc();
        String id = d.path("_id").asText();
        try {
            Map<String, StoredAttachment> stored = new HashMap<>();
            for (AttachmentBody b : f.attachments()) {
                ObjectNode meta = (ObjectNode) d.get("_attachments").get(b.name());
                try (InputStream in = b.open()) {
                    StoredAttachment s = guard(() -> secured.readAttachment(id, b.name(), meta, in));
                    if (s != null) stored.put(b.name(), s);
                } catch (IOException e) {
                    throw new ReplicationException(500, "attachment_read_error", e.getMessage(), e);
                }
            }
            DocUpdate u = prepare(d).withStored(stored);
            UpdateResult r = guard(() -> secured.update(List.of(u), false)).getFirst();
            return r.ok() ? null : new WriteError(id, d.path("_rev").asText(), r.error().error(), r.error().reason());
        } catch (StorageException e) {
            return new WriteError(id, d.path("_rev").asText(), e.error(), e.reason());
        }
    }

    @Override
    public String ensureFullCommit() {
        return "0"; // every acknowledged write is durable
    }

    @Override
    public void close() {}

    /** A database deleted under a running replication is CouchDB's db_not_found. */
    private <T> T guard(java.util.function.Supplier<T> body) {
        open();
        try {
            return body.get();
        } catch (StorageException e) {
            if (e.kind() == StorageException.Kind.NOT_FOUND && e.reason().equals("Database does not exist.")) {
                throw new ReplicationException(404, "db_not_found", "could not open " + name);
            }
            if (e.kind() == StorageException.Kind.NOT_FOUND) throw new ReplicationException(404, "not_found", e.reason());
            throw e;
        }
    }
}
