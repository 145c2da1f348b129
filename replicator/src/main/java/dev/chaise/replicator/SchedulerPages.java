package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.Cursor;
import dev.chaise.storage.Database;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.ScanProperties;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.json.Json;
import dev.chaise.views.jobs.JobQueue;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Owns the {@code _scheduler} pages: {@code _scheduler/jobs} (every job waiting or running, from
 * the job queue, so every server shows the same; this server's live counters for its own) and
 * {@code _scheduler/docs} (each {@code _replicator} document's replication: its terminal state,
 * its job, or what {@link ReplicatorDocs} knows of it).
 */
public final class SchedulerPages {
    private final ReplicatorConfig config;
    private final JobQueue queue;
    private final Scheduler scheduler;
    private final ReplicatorDocs docs;

    SchedulerPages(ReplicatorConfig config, JobQueue queue, Scheduler scheduler, ReplicatorDocs docs) {
        this.config = config;
        this.queue = queue;
        this.scheduler = scheduler;
        this.docs = docs;
    }

    // ---------------------------------------------------------------- _scheduler/jobs

    /** {@code GET /_scheduler/jobs}: every replication waiting or running, by id. */
    public ObjectNode jobs(int skip, int limit) {
        List<ObjectNode> all = new ArrayList<>();
        for (JobQueue.Job j : queue.list(JobData.TYPE)) {
            if (j.state() == JobQueue.State.FINISHED) continue;
            all.add(jobJson(j));
        }
        all.sort(Comparator.comparing(o -> o.path("id").asText()));
        return page("jobs", all.size(), all, skip, limit);
    }

    /** {@code GET /_scheduler/jobs/{id}}: 404 if no such replication is waiting or running. */
    public ObjectNode job(String id) {
        String full = id.replace(' ', '+');
        return queue.get(JobData.TYPE, full).filter(j -> j.state() != JobQueue.State.FINISHED).map(this::jobJson)
                .orElseThrow(() -> new ReplicationException(404, "not_found", "missing"));
    }

    /** A {@code _scheduler} listing: {@code total_rows}, {@code offset} and the page of {@code rows} under {@code name}. */
    private static ObjectNode page(String name, long total, List<ObjectNode> rows, int skip, int limit) {
        ObjectNode out = Json.NODES.objectNode();
        out.put("total_rows", total);
        int offset = Math.min(skip, rows.size());
        out.put("offset", offset);
        ArrayNode a = out.putArray(name);
        rows.subList(offset, Math.min(rows.size(), offset + Math.max(0, limit))).forEach(a::add);
        return out;
    }

    /** couch_replicator_scheduler:job_ejson. */
    private ObjectNode jobJson(JobQueue.Job j) {
        JsonNode d = live(j);
        ObjectNode o = Json.NODES.objectNode();
        o.put("id", j.id());
        boolean isRunning = j.state() == JobQueue.State.RUNNING && !"crashing".equals(d.path("state").asText());
        if (isRunning && d.path("pid").isTextual()) o.put("pid", d.get("pid").asText());
        else o.putNull("pid");
        o.set("source", d.path("source"));
        o.set("target", d.path("target"));
        o.set("database", d.path("database"));
        o.set("user", d.path("user").path("name"));
        o.set("doc_id", d.path("doc_id"));
        o.set("info", d.has("info") ? d.get("info") : Json.NODES.nullNode());
        o.set("history", d.path("history"));
        o.put("node", d.path("node").asText(config.nodeName()));
        o.set("start_time", d.path("start_time"));
        return o;
    }

    /** The job's data, with this server's live counters if it runs the job. */
    private JsonNode live(JobQueue.Job j) {
        JobRunner r = scheduler.runner(j.id()).orElse(null);
        if (r == null || j.state() != JobQueue.State.RUNNING) return j.data();
        ObjectNode d;
        synchronized (r.data) {
            d = r.data.deepCopy();
        }
        Replication rep = r.replication;
        if (rep != null) d.set("info", JobData.info(rep));
        d.put("state", r.state);
        if (r.crashReason != null) d.put("crash_reason", r.crashReason);
        d.put("node", config.nodeName());
        return d;
    }

    /**
     * The state of one job as {@code _scheduler/docs} shows it (job_summary): running, pending or
     * crashing, with counters or the crash reason, or null if there is no such job.
     */
    private ObjectNode jobSummary(String id) {
        Optional<JobQueue.Job> j = queue.get(JobData.TYPE, id);
        if (j.isEmpty() || j.get().state() == JobQueue.State.FINISHED) return null;
        JsonNode d = live(j.get());
        ObjectNode o = Json.NODES.objectNode();
        o.set("source", d.path("source"));
        o.set("target", d.path("target"));
        String state = j.get().state() == JobQueue.State.PENDING ? "pending" : d.path("state").asText("running");
        if (state.equals("initializing")) state = "running";
        o.put("state", state);
        if (state.equals("crashing")) o.putObject("info").put("error", d.path("crash_reason").asText());
        else o.set("info", d.has("info") ? d.get("info") : Json.NODES.nullNode());
        o.put("error_count", CrashBackoff.consecutiveCrashes(d.path("history"), config.healthThreshold()));
        JsonNode h = d.path("history");
        o.set("last_updated", h.size() > 0 ? h.get(0).path("timestamp") : d.path("start_time"));
        o.set("start_time", d.path("start_time"));
        o.putNull("source_proxy");
        o.putNull("target_proxy");
        return o;
    }

    // ---------------------------------------------------------------- _scheduler/docs

    /** {@code GET /_scheduler/docs[/_replicator]}: every document's replication, in id order. */
    public ObjectNode docs(Set<String> wanted, int skip, int limit) {
        Database db = docs.database();
        if (db == null) throw new ReplicationException(404, "not_found", "Database does not exist.");
        List<ObjectNode> rows = new ArrayList<>();
        Cursor<ObjectNode> c = db.allDocs(Database.IdRange.ALL, ScanProperties.FORWARD, null, (reader, info) -> {
            if (info.id().startsWith(DocumentJson.DESIGN_PREFIX)) return null;
            return DocumentJson.render(reader.get(info.id(), info.rev(), false));
        });
        int total = 0;
        while (c.hasNext()) {
            ObjectNode doc = c.next();
            total++;
            ObjectNode row = row(doc);
            if (row == null) continue;
            if (!wanted.isEmpty() && !wanted.contains(row.path("state").asText())) continue;
            rows.add(row);
        }
        return page("docs", total, rows, skip, limit);
    }

    /** {@code GET /_scheduler/docs/_replicator/{docid}}: 404 if there is no such document. */
    public ObjectNode doc(String docId) {
        Database db = docs.database();
        if (db == null) throw new ReplicationException(404, "not_found", "Database does not exist.");
        StoredDoc d;
        try {
            d = db.get(docId, null, false);
        } catch (StorageException e) {
            throw new ReplicationException(404, "not_found", "missing");
        }
        ObjectNode row = row(DocumentJson.render(d));
        if (row == null) throw new ReplicationException(404, "not_found", "missing");
        return row;
    }

    /** One document's row: from its terminal state, the scheduler, or what this server knows. */
    private ObjectNode row(ObjectNode doc) {
        String docId = doc.path("_id").asText();
        String terminal = doc.path("_replication_state").asText("");
        if (terminal.equals("completed") || terminal.equals("failed")) return fromDoc(doc, terminal);
        ReplicatorDocs.DocState s = docs.state(docId);
        ObjectNode o = Json.NODES.objectNode();
        o.put("doc_id", docId);
        o.put("database", ReplicatorDocs.DB);
        if (s != null && s.state().equals("scheduled")) {
            o.put("id", s.repId());
            o.put("node", config.nodeName());
            ObjectNode job = jobSummary(s.repId());
            if (job != null) {
                o.setAll(job);
                return o;
            }
            // submitted, not yet seen running, or done and its document not yet updated
            o.set("source", Json.NODES.textNode(stripped(doc.get("source"))));
            o.set("target", Json.NODES.textNode(stripped(doc.get("target"))));
            o.put("state", "pending");
            o.putNull("info");
            o.put("error_count", 0);
            o.put("last_updated", s.lastUpdated());
            o.put("start_time", s.startTime());
            return o;
        }
        o.putNull("id");
        o.put("state", s == null ? "initializing" : s.state());
        if (s != null && s.error() != null) o.putObject("info").put("error", s.error());
        else o.putNull("info");
        o.put("error_count", s == null ? 0 : s.errorCount());
        o.put("node", config.nodeName());
        o.put("last_updated", s == null ? JobData.now() : s.lastUpdated());
        o.put("start_time", s == null ? JobData.now() : s.startTime());
        return o;
    }

    /** info_from_doc: a terminal state as the document records it. */
    private static ObjectNode fromDoc(ObjectNode doc, String state) {
        ObjectNode o = Json.NODES.objectNode();
        o.put("doc_id", doc.path("_id").asText());
        o.put("database", ReplicatorDocs.DB);
        o.putNull("id");
        o.put("source", stripped(doc.get("source")));
        o.put("target", stripped(doc.get("target")));
        o.put("state", state);
        if (state.equals("completed")) {
            ObjectNode stats = doc.path("_replication_stats") instanceof ObjectNode st ? st.deepCopy() : Json.NODES.objectNode();
            JsonNode start = stats.remove("start_time");
            o.put("error_count", 0);
            o.set("info", stats);
            o.set("start_time", start == null ? Json.NODES.nullNode() : start);
            o.set("last_updated", doc.path("_replication_state_time"));
        } else {
            o.put("error_count", 1);
            o.putObject("info").put("error", doc.path("_replication_state_reason").asText(""));
            o.set("start_time", doc.path("_replication_state_time"));
            o.set("last_updated", doc.path("_replication_state_time"));
        }
        return o;
    }

    /** strip_url_creds: a URL without its password, a local name as is, anything else null. */
    static String stripped(JsonNode endpoint) {
        if (endpoint == null) return null;
        try {
            if (endpoint.isTextual() && !Endpoint.isUrl(endpoint.textValue())) return endpoint.textValue();
            if (endpoint.isObject() && endpoint.path("url").isTextual() && !Endpoint.isUrl(endpoint.get("url").textValue())) return endpoint.get("url").textValue();
            if (endpoint.isTextual()) return Endpoint.remote(endpoint.textValue(), null, null).url();
            if (endpoint.isObject()) return Endpoint.remote(endpoint.path("url").asText(null), null, null).url();
        } catch (ReplicationException e) {
            return null;
        }
        return null;
    }
}
