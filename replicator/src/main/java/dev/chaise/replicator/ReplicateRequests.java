package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.jobs.JobQueue;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns answering {@code POST /_replicate}: a replication becomes a transient job (whichever
 * server takes it runs it), a one-shot's result or error is the request's answer, and
 * {@code cancel} removes a job. A transient job that crashes is removed, as in CouchDB.
 */
public final class ReplicateRequests {
    private static final Logger log = LoggerFactory.getLogger(ReplicateRequests.class);
    private final ReplicatorConfig config;
    private final JobQueue queue;
    private final ReplicationIds ids;
    private final Scheduler scheduler;

    private final ReplicatorMetrics metrics;

    ReplicateRequests(ReplicatorConfig config, JobQueue queue, ReplicationIds ids, Scheduler scheduler, ReplicatorMetrics metrics) {
        this.config = config;
        this.metrics = metrics;
        this.queue = queue;
        this.ids = ids;
        this.scheduler = scheduler;
    }

    /** An answer to {@code POST /_replicate}. */
    public record Answer(int status, ObjectNode body) {}

    /**
     * {@code POST /_replicate}, as the request's user; {@code authorization} and {@code cookie}
     * are the request's headers (they make a local name's id, as in CouchDB 3).
     */
    public Answer replicate(JsonNode body, ReplicationSpec.RepUser user, String authorization, String cookie) throws InterruptedException {
        ReplicationSpec spec = ReplicationSpec.parse(body, user,
                new ReplicationSpec.Context(config.loopbackBase().get(), authorization == null ? "" : authorization, cookie == null ? "" : cookie, true, config.defaults()));
        if (spec.cancel()) return cancel(spec.cancelId() != null ? spec.cancelId() : ids.fullId(spec), user);
        String id = ids.fullId(spec);
        ObjectNode data = JobData.of(spec, id, ReplicationIds.base(id), null, null);
        queue.add(JobData.TYPE, id, data);
        metrics.adds.increment();
        log.info("replication {} added from _replicate ({} -> {})", id, spec.source().display(), spec.target().display());
        if (spec.continuous()) return new Answer(202, Json.NODES.objectNode().put("ok", true).put("_local_id", id));
        return awaitResult(id);
    }

    private Answer awaitResult(String id) throws InterruptedException {
        while (true) {
            Optional<JobQueue.Job> j = queue.awaitState(JobData.TYPE, id, JobQueue.State.FINISHED, Duration.ofSeconds(2));
            if (j.isPresent()) {
                JsonNode r = j.get().data().path("result");
                if (r.has("error")) throw new ReplicationException(r.path("status").asInt(500), r.path("error").asText(), r.path("reason").asText());
                ObjectNode out = Json.NODES.objectNode().put("ok", true);
                if (r.has("history_body")) out.setAll((ObjectNode) r.get("history_body"));
                return new Answer(200, out);
            }
            if (queue.get(JobData.TYPE, id).isEmpty()) return new Answer(200, Json.NODES.objectNode().put("ok", "stopped")); // cancelled
            if (Thread.interrupted()) throw new InterruptedException();
        }
    }

    private Answer cancel(String id, ReplicationSpec.RepUser user) {
        Optional<JobQueue.Job> j = queue.get(JobData.TYPE, id);
        if (j.isEmpty() || j.get().state() == JobQueue.State.FINISHED) throw new ReplicationException(404, "not_found", "missing");
        String owner = j.get().data().path("user").path("name").asText(null);
        if (!user.isAdmin() && (owner == null || !owner.equals(user.name()))) {
            throw new ReplicationException(401, "unauthorized", "You are not a server admin.");
        }
        scheduler.removeJob(id);
        log.info("Replication '{}' cancelled", id);
        return new Answer(200, Json.NODES.objectNode().put("ok", true).put("_local_id", id));
    }
}
