package dev.chaise.replicator;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Owns the {@code _active_tasks} entries of type replication: one per job this server runs now. */
public final class ReplicationTasks {
    private final ReplicatorConfig config;
    private final Scheduler scheduler;

    ReplicationTasks(ReplicatorConfig config, Scheduler scheduler) {
        this.config = config;
        this.scheduler = scheduler;
    }

    /** The entries, in CouchDB's shape. */
    public List<ObjectNode> list() {
        List<ObjectNode> out = new ArrayList<>();
        for (JobRunner r : scheduler.runners()) {
            Replication rep = r.replication;
            // Listed once it knows where it starts, as CouchDB adds the task after its start sequence:
            // a client reads through_seq as a since= (replication_test.exs), and null is no sequence.
            if (rep == null || rep.throughSeq() == null) continue;
            ObjectNode t = Json.NODES.objectNode();
            t.put("node", config.nodeName());
            t.put("pid", r.pid());
            t.put("type", "replication");
            t.set("user", r.data.path("user").path("name"));
            t.put("replication_id", r.id());
            t.set("database", r.data.path("database"));
            t.set("doc_id", r.data.path("doc_id"));
            t.put("source", rep.sourceName());
            t.put("target", rep.targetName());
            t.put("continuous", r.data.path("continuous").asBoolean(false));
            t.put("checkpoint_interval", r.data.path("checkpoint_interval").asLong(config.defaults().checkpointIntervalMs()));
            t.setAll(JobData.info(rep));
            long started = Instant.parse(r.data.path("start_time").asText(JobData.now())).getEpochSecond();
            t.put("started_on", started);
            t.put("updated_on", Instant.now().getEpochSecond());
            out.add(t);
        }
        return out;
    }
}
