package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.Cursor;
import dev.chaise.storage.Database;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.UserCtx;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.ScanProperties;
import dev.chaise.storage.Sequence;
import dev.chaise.storage.Storage;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.UpdateResult;
import dev.chaise.views.jobs.JobQueue;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns the {@code _replicator} database, as CouchDB 3's document processor runs it: every server
 * follows its changes; a document starts a replication job (submitted once, whichever server sees
 * it first), an edit restarts it, a deletion stops it. States live in the scheduler, not in the
 * document, except the terminal ones CouchDB 3 also writes back: {@code completed} (with the
 * counters) and {@code failed} (a document that cannot be parsed, with the reason), so a restarted
 * server does not run them again. {@code error} (the id cannot be computed yet: a user filter's
 * source is unreachable) is retried with CouchDB's random exponential backoff. What it knows of a
 * document is what {@link SchedulerPages} shows for it; writes by clients pass {@link #beforeUpdate}.
 *
 * <p>Beyond CouchDB 3, a document may name local databases, as CouchDB 2 allowed: they are
 * reached as the document's {@code user_ctx}, which a non-admin writer may only set to itself.
 */
public final class ReplicatorDocs {
    private static final Logger log = LoggerFactory.getLogger(ReplicatorDocs.class);
    public static final String DB = "_replicator";
    public static final String OWNER = "owner";
    private static final String ADMIN_ROLE = "_admin";

    /** What this server knows of a document that is not in a terminal state. */
    record DocState(String state, String repId, String error, int errorCount, String lastUpdated, String startTime, long retryAtNanos) {}

    private final Storage storage;
    private final ReplicatorConfig config;
    private final JobQueue queue;
    private final ReplicationIds ids;
    private final Scheduler scheduler;
    private final Predicate<String> serverAdmin;
    private final Map<String, DocState> states = new ConcurrentHashMap<>();

    /** @param serverAdmin whether a user name is a server admin's: their documents run as server admins */
    private final ReplicatorMetrics metrics;

    ReplicatorDocs(Storage storage, ReplicatorConfig config, JobQueue queue, ReplicationIds ids, Scheduler scheduler, Predicate<String> serverAdmin,
                   ReplicatorMetrics metrics) {
        this.storage = storage;
        this.metrics = metrics;
        this.config = config;
        this.queue = queue;
        this.ids = ids;
        this.scheduler = scheduler;
        this.serverAdmin = serverAdmin;
    }

    // ---------------------------------------------------------------- writes by clients

    /**
     * CouchDB's {@code before_doc_update} for {@code _replicator}: the document gets its
     * {@code owner}; a non-admin may not edit another user's document nor claim another
     * {@code user_ctx}; a document that does not parse is refused (403 forbidden, the reason).
     * Design and local documents, deletions and replicated writes pass.
     */
    public static ObjectNode beforeUpdate(String docId, ObjectNode body, boolean deleted, String userName, List<String> roles, boolean admin) {
        if (docId == null || docId.startsWith(DocumentJson.DESIGN_PREFIX) || docId.startsWith(DocumentJson.LOCAL_PREFIX)) return body;
        ObjectNode out = body;
        JsonNode owner = body.get(OWNER);
        if (owner == null || (owner.isNull() && admin)) {
            out = body.deepCopy();
            if (userName == null) out.putNull(OWNER);
            else out.put(OWNER, userName);
        } else if (!(owner.isTextual() && owner.textValue().equals(userName)) && !admin) {
            throw new ReplicationException(403, "forbidden", "Can't update replication documents from other users.");
        }
        if (deleted || "failed".equals(body.path("_replication_state").asText(null))) return out;
        if (!admin && body.has("user_ctx")) {
            JsonNode ctx = body.get("user_ctx");
            String name = ctx.path("name").isTextual() ? ctx.get("name").textValue() : null;
            boolean ok = name == null || name.equals(userName);
            for (JsonNode role : ctx.path("roles")) ok &= roles.contains(role.asText());
            if (!ok) throw new ReplicationException(403, "forbidden", "A non-admin may only replicate as itself: user_ctx must name you and roles you have.");
        }
        try {
            ReplicationSpec.parse(spec(out), user(out), new ReplicationSpec.Context("http://127.0.0.1:5984/", null, null, true, ReplicationSpec.Defaults.couchdb()));
        } catch (ReplicationException e) {
            throw new ReplicationException(403, "forbidden", e.reason());
        }
        return out;
    }

    /** The replication a document asks for: its body without the members CouchDB keeps for itself. */
    static ObjectNode spec(ObjectNode doc) {
        ObjectNode s = doc.deepCopy();
        for (String k : List.of("_id", "_rev", "_deleted", "_revisions", "_attachments", "_conflicts", OWNER, "_replication_state",
                "_replication_state_time", "_replication_state_reason", "_replication_id", "_replication_stats")) {
            s.remove(k);
        }
        s.remove("cancel"); // a document cannot cancel another replication
        return s;
    }

    /** user_ctx, as CouchDB 2 read it; none means anonymous. */
    static ReplicationSpec.RepUser user(ObjectNode doc) {
        JsonNode ctx = doc.get("user_ctx");
        if (ctx == null || !ctx.isObject()) return ReplicationSpec.RepUser.NONE;
        List<String> roles = new ArrayList<>();
        for (JsonNode role : ctx.path("roles")) roles.add(role.asText());
        return new ReplicationSpec.RepUser(ctx.path("name").isTextual() ? ctx.get("name").textValue() : null, roles);
    }

    /**
     * Who a document's replication runs as: its {@code user_ctx} when it names one; otherwise its
     * owner when the owner is a server admin, with {@code _admin}, as CouchDB 3 runs a document
     * with its owner's user_ctx (without this, a server admin's document naming local databases
     * ran anonymously and failed "unauthorized"). Any other document without {@code user_ctx}
     * runs anonymously. The owner is trusted as far as {@link #beforeUpdate} sets it: only a
     * database admin of {@code _replicator}, who may set {@code user_ctx} anyway, may name another.
     */
    static ReplicationSpec.RepUser runAs(ObjectNode doc, Predicate<String> serverAdmin) {
        if (doc.get("user_ctx") instanceof ObjectNode) return user(doc);
        JsonNode owner = doc.get(OWNER);
        if (owner != null && owner.isTextual() && serverAdmin.test(owner.textValue())) {
            return new ReplicationSpec.RepUser(owner.textValue(), List.of(ADMIN_ROLE));
        }
        return ReplicationSpec.RepUser.NONE;
    }

    // ---------------------------------------------------------------- following the database

    /** What this server knows of a document's replication, or null (none yet, or a terminal state). */
    DocState state(String docId) {
        return states.get(docId);
    }

    /** The database, or null while it does not exist (the server makes it at its first start). */
    Database database() {
        try {
            return storage.open(DB);
        } catch (StorageException e) {
            if (e.kind() != StorageException.Kind.NOT_FOUND) throw e;
            return null;
        }
    }

    /** The watcher: every change of {@code _replicator}, then a wait for the next write (or a rescan). */
    void run() {
        Sequence since = null;
        Database db = null;
        while (!Thread.currentThread().isInterrupted()) {
            try {
                if (db == null) {
                    db = database();
                    if (db != null) metrics.dbsFound.increment();
                }
                if (db == null) { // not there (yet, or deleted): look again now and then
                    Thread.sleep(Math.min(2_000, config.docsRescan().toMillis()));
                    continue;
                }
                CompletableFuture<Void> watch = db.watchWrites();
                try {
                    Database d = db;
                    Cursor<String> c = db.changes(since, ScanProperties.FORWARD, (reader, ch) -> ch.id());
                    while (c.hasNext()) process(d, c.next());
                    if (c.continuation() != null) since = Sequence.fromContinuation(c.continuation());
                    retryErrors(d);
                    await(watch, nextWake());
                } finally {
                    watch.cancel(false);
                }
            } catch (InterruptedException e) {
                return;
            } catch (StorageException e) {
                if (e.kind() == StorageException.Kind.NOT_FOUND) { // deleted: its jobs go
                    metrics.dbsDeleted.increment();
                    db = null;
                    since = null;
                    for (String docId : List.copyOf(states.keySet())) removed(docId);
                    continue;
                }
                log.warn("following {} failed", DB, e);
                if (!sleep(5_000)) return;
            } catch (RuntimeException e) {
                log.warn("following {} failed", DB, e);
                if (!sleep(5_000)) return;
            }
        }
    }

    private static boolean sleep(long ms) {
        try {
            Thread.sleep(ms);
            return true;
        } catch (InterruptedException e) {
            return false;
        }
    }

    private long nextWake() {
        long wake = config.docsRescan().toNanos();
        long now = System.nanoTime();
        for (DocState s : states.values()) if (s.state().equals("error")) wake = Math.min(wake, Math.max(0, s.retryAtNanos() - now));
        return Math.max(TimeUnit.MILLISECONDS.toNanos(50), wake);
    }

    private static void await(CompletableFuture<Void> watch, long nanos) throws InterruptedException {
        try {
            watch.get(nanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException | java.util.concurrent.CancellationException e) {
            // look again anyway
        }
    }

    private void retryErrors(Database db) {
        long now = System.nanoTime();
        for (Map.Entry<String, DocState> e : states.entrySet()) {
            if (e.getValue().state().equals("error") && e.getValue().retryAtNanos() <= now) process(db, e.getKey());
        }
    }

    private void process(Database db, String docId) {
        if (docId.startsWith(DocumentJson.DESIGN_PREFIX)) return;
        metrics.dbChanges.increment();
        StoredDoc d;
        try {
            d = db.get(docId, null, false);
        } catch (StorageException e) {
            if (e.kind() != StorageException.Kind.NOT_FOUND || e.reason().equals("Database does not exist.")) throw e;
            removed(docId);
            return;
        }
        ObjectNode body = DocumentJson.render(d);
        String terminal = body.path("_replication_state").asText("");
        DocState prev = states.get(docId);
        if (terminal.equals("completed") || terminal.equals("failed")) {
            states.remove(docId);
            if (prev != null && prev.repId() != null && terminal.equals("failed")) removeOwned(prev.repId(), docId);
            return;
        }
        ReplicationSpec spec;
        ObjectNode rep = spec(body);
        try {
            spec = ReplicationSpec.parse(rep, runAs(body, serverAdmin), new ReplicationSpec.Context(config.loopbackBase().get(), null, null, true, config.defaults()));
        } catch (ReplicationException e) {
            failed(db, docId, e.reason(), prev);
            return;
        }
        String id;
        try {
            id = ids.fullId(spec);
        } catch (ReplicationException e) {
            int count = prev != null && prev.state().equals("error") ? prev.errorCount() + 1 : 1;
            // error_backoff: a random wait in [1, 64 * 2^count] seconds, the exponent at most 12
            long seconds = ThreadLocalRandom.current().nextLong(1, (64L << Math.min(count, 12)) + 1);
            states.put(docId, new DocState("error", null, e.summary(), count, JobData.now(), start(prev),
                    System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)));
            if (prev != null && prev.repId() != null) removeOwned(prev.repId(), docId);
            return;
        }
        if (prev != null && prev.repId() != null && !prev.repId().equals(id)) removeOwned(prev.repId(), docId);
        Optional<JobQueue.Job> existing = queue.get(JobData.TYPE, id);
        if (existing.isPresent() && existing.get().state() != JobQueue.State.FINISHED) {
            JsonNode owner = existing.get().data().path("doc_id");
            if (!owner.isTextual() || !owner.textValue().equals(docId) || !existing.get().data().path("database").asText().equals(DB)) {
                failed(db, docId, "Replication `" + id + "` specified by document `" + docId + "` already started, triggered by document `"
                        + owner.asText() + "` from db `" + existing.get().data().path("database").asText() + "`", prev);
                return;
            }
            if (!existing.get().data().path("rep").equals(rep)) { // the same replication with other options: restart it
                scheduler.removeJob(id);
                existing = Optional.empty();
            }
        }
        String base = ReplicationIds.base(id);
        if (existing.isEmpty() || existing.get().state() == JobQueue.State.FINISHED) {
            if (queue.addIfAbsent(JobData.TYPE, id, JobData.of(spec, id, base, DB, docId))) {
                metrics.adds.increment();
                log.info("Document `{}` triggered replication `{}`", docId, id);
            } else {
                metrics.duplicateAdds.increment();
            }
        }
        states.put(docId, new DocState("scheduled", id, null, 0, JobData.now(), start(prev), 0));
    }

    private static String start(DocState prev) {
        return prev == null ? JobData.now() : prev.startTime();
    }

    /** Stops a job if it is this document's. */
    private void removeOwned(String repId, String docId) {
        Optional<JobQueue.Job> j = queue.get(JobData.TYPE, repId);
        if (j.isPresent() && docId.equals(j.get().data().path("doc_id").asText(null))) scheduler.removeJob(repId);
    }

    private void removed(String docId) {
        DocState prev = states.remove(docId);
        if (prev != null && prev.repId() != null) {
            removeOwned(prev.repId(), docId);
            log.info("Stopped replication `{}` because its document `{}` was deleted", prev.repId(), docId);
        }
        // a job this server never saw (submitted by another server) is found by its document
        for (JobQueue.Job j : queue.list(JobData.TYPE)) {
            if (j.state() != JobQueue.State.FINISHED && docId.equals(j.data().path("doc_id").asText(null)) && DB.equals(j.data().path("database").asText(null))) {
                scheduler.removeJob(j.id());
            }
        }
    }

    /** update_failed: the document records {@code failed} and the reason; its replication does not run. */
    private void failed(Database db, String docId, String reason, DocState prev) {
        log.error("Error processing replication doc `{}` from `{}`: {}", docId, DB, reason);
        if (prev != null && prev.repId() != null) removeOwned(prev.repId(), docId);
        states.remove(docId);
        metrics.failedStateUpdates.increment();
        updateDoc(db, docId, body -> {
            body.put("_replication_state", "failed");
            body.remove("_replication_stats");
            body.put("_replication_state_reason", reason);
        });
    }

    /** update_doc_completed: a one-shot replication's document records {@code completed} and its counters. */
    void completed(String database, String docId, String repId, ObjectNode info, String startTime) {
        Database db = database();
        if (db == null) return;
        ObjectNode stats = info.deepCopy();
        stats.put("start_time", startTime);
        metrics.completedStateUpdates.increment();
        updateDoc(db, docId, body -> {
            body.put("_replication_state", "completed");
            body.remove("_replication_state_reason");
            body.set("_replication_stats", stats);
        });
        states.remove(docId);
    }

    private interface Edit {
        void apply(ObjectNode body);
    }

    /** The replicator itself, as it writes its documents' state. */
    private static final UserCtx REPLICATOR = UserCtx.server("replicator");

    /** Rewrites a document's state members as the replicator (the server: the database's rules see an admin), retrying conflicts. */
    private void updateDoc(Database db, String docId, Edit edit) {
        for (int attempt = 0; attempt < 10; attempt++) {
            StoredDoc d;
            try {
                d = db.get(docId, null, false);
            } catch (StorageException e) {
                return; // deleted meanwhile: nothing to record
            }
            ObjectNode body = d.body().deepCopy();
            String before = body.path("_replication_state").asText(null);
            edit.apply(body);
            if (body.equals(d.body())) return;
            if (!body.path("_replication_state").asText("").equals(before)) body.put("_replication_state_time", JobData.now());
            UpdateResult res = db.openFor(REPLICATOR, SecuredDb.Level.MEMBER)
                    .update(List.of(DocUpdate.edit(docId, d.rev(), false, body)), true).getFirst();
            if (res.ok()) return;
            if (res.error().kind() != StorageException.Kind.CONFLICT) {
                log.error("could not record the state of replication document {}: {}", docId, res.error().reason());
                return;
            }
        }
    }
}
