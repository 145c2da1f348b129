package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * Owns the shape of a replication job in the KV job queue (type {@value #TYPE}, id the
 * replication id): the data every server reads to run the job or show it, and the counters
 * and errors written into it. Whoever adds, runs or shows a job goes through here.
 */
final class JobData {
    static final String TYPE = "replication";
    private static final DateTimeFormatter ISO = DateTimeFormatter.ISO_INSTANT;

    private JobData() {}

    /** A new job's data: the replication as asked, who runs it, what {@code _scheduler} shows, and its first event. */
    static ObjectNode of(ReplicationSpec spec, String id, String base, String database, String docId) {
        ObjectNode d = Json.NODES.objectNode();
        d.set("rep", spec.json());
        ObjectNode u = d.putObject("user");
        if (spec.user().name() == null) u.putNull("name");
        else u.put("name", spec.user().name());
        ArrayNode roles = u.putArray("roles");
        spec.user().roles().forEach(roles::add);
        d.put("id", id);
        d.put("base", base);
        d.put("source", spec.source().display());
        d.put("target", spec.target().display());
        if (database == null) d.putNull("database");
        else d.put("database", database);
        if (docId == null) d.putNull("doc_id");
        else d.put("doc_id", docId);
        d.put("continuous", spec.continuous());
        d.put("checkpoint_interval", spec.checkpointIntervalMs());
        String now = now();
        d.put("start_time", now);
        d.putArray("history").addObject().put("timestamp", now).put("type", "added");
        d.putNull("info");
        return d;
    }

    /** Who the job runs as. */
    static ReplicationSpec.RepUser user(JsonNode data) {
        JsonNode u = data.path("user");
        List<String> roles = new ArrayList<>();
        for (JsonNode r : u.path("roles")) roles.add(r.asText());
        return new ReplicationSpec.RepUser(u.path("name").isTextual() ? u.get("name").textValue() : null, roles);
    }

    /** A run's counters as _scheduler and _active_tasks show them. */
    static ObjectNode info(Replication r) {
        ObjectNode o = r.stats.toJson();
        Long pending = r.changesPending();
        if (pending == null) o.putNull("changes_pending");
        else o.put("changes_pending", pending);
        o.set("checkpointed_source_seq", seqOrNull(r.checkpointedSeq()));
        o.set("source_seq", seqOrNull(r.sourceSeq()));
        o.set("through_seq", seqOrNull(r.throughSeq()));
        return o;
    }

    private static JsonNode seqOrNull(JsonNode s) {
        return s == null ? Json.NODES.nullNode() : s;
    }

    /** A failed run's result, which {@code _replicate} answers with. */
    static ObjectNode error(ReplicationException e) {
        return Json.NODES.objectNode().put("error", e.error()).put("reason", e.reason()).put("status", e.status());
    }

    /** A timestamp as CouchDB's scheduler writes them: ISO 8601, whole seconds. */
    static String now() {
        return ISO.format(Instant.now().truncatedTo(ChronoUnit.SECONDS));
    }
}
