package dev.chaise.replicator;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.jobs.JobQueue;
import dev.chaise.views.jobs.LeaseLostException;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns one job this server holds: runs its replication, proves the lease alive every heartbeat
 * (state and counters written into the job, which is what {@code _scheduler} reads on any server),
 * restarts it after a crash with {@link CrashBackoff}'s wait, and finishes or gives back the job.
 */
final class JobRunner {
    private static final Logger log = LoggerFactory.getLogger(JobRunner.class);

    /** Told when a {@code _replicator} document's one-shot replication completed, to record it in the document. */
    interface Completed {
        void completed(String database, String docId, String repId, ObjectNode info, String startTime);
    }

    final JobQueue.Lease lease;
    final ObjectNode data;
    private final ReplicatorConfig config;
    private final JobQueue queue;
    private final Peers peers;
    private final Completed completed;
    private final BooleanSupplier closing;
    volatile Thread thread;
    volatile Replication replication;
    volatile boolean stopped;
    volatile String state = "initializing";
    volatile String crashReason;

    /** @param closing true once this server is stopping: the job is then given back, not finished */
    private final ReplicatorMetrics metrics;

    JobRunner(JobQueue.Lease lease, ReplicatorConfig config, JobQueue queue, Peers peers, Completed completed, BooleanSupplier closing,
              ReplicatorMetrics metrics) {
        this.lease = lease;
        this.metrics = metrics;
        this.data = ((ObjectNode) lease.data()).deepCopy();
        this.config = config;
        this.queue = queue;
        this.peers = peers;
        this.completed = completed;
        this.closing = closing;
    }

    String id() {
        return lease.jobId();
    }

    /** The pid {@code _scheduler} and {@code _active_tasks} show: the node and this runner's thread. */
    String pid() {
        Thread t = thread;
        return "<" + config.nodeName() + "." + Long.toHexString(t == null ? 0 : t.threadId()) + ">";
    }

    void stop() {
        stopped = true;
        Thread t = thread;
        if (t != null) t.interrupt();
    }

    private void event(String type, String reason) {
        synchronized (data) {
            ArrayNode h = (ArrayNode) data.get("history");
            ObjectNode e = Json.NODES.objectNode().put("timestamp", JobData.now()).put("type", type);
            if (reason != null) e.put("reason", reason);
            h.insert(0, e);
            while (h.size() > config.maxHistory()) h.remove(h.size() - 1);
        }
    }

    /** Publishes state and counters in the job (proof of life); false if the lease is gone. */
    boolean heartbeat() {
        ObjectNode snapshot;
        synchronized (data) {
            data.put("state", state);
            data.put("node", config.nodeName());
            data.put("pid", pid());
            Replication r = replication;
            if (r != null) data.set("info", JobData.info(r));
            if (crashReason == null) data.remove("crash_reason");
            else data.put("crash_reason", crashReason);
            snapshot = data.deepCopy();
        }
        try {
            queue.update(lease, snapshot);
            return true;
        } catch (LeaseLostException e) {
            return false;
        }
    }

    void run() {
        Thread beat = Thread.ofVirtual().name("replication-heartbeat-" + id()).start(() -> {
            while (!stopped && !closing.getAsBoolean()) {
                try {
                    Thread.sleep(config.heartbeat().toMillis());
                    if (!heartbeat()) {
                        log.info("replication {}: its job was removed or taken over; stopping", id());
                        stop();
                        return;
                    }
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    log.debug("replication {}: heartbeat failed: {}", id(), e.getMessage());
                }
            }
        });
        try {
            loop();
        } finally {
            beat.interrupt();
        }
    }

    private void loop() {
        Stats stats = new Stats();
        stats.atLeast(data.get("info"));
        boolean transient_ = data.path("doc_id").isNull();
        while (!stopped && !closing.getAsBoolean()) {
            ReplicationSpec spec;
            try {
                spec = ReplicationSpec.parse(data.get("rep"), JobData.user(data), new ReplicationSpec.Context(config.loopbackBase().get(), null, null, true, config.defaults()));
            } catch (ReplicationException e) {
                finish(JobData.error(e));
                return;
            }
            state = "running";
            crashReason = null;
            event("started", null);
            metrics.starts.increment();
            heartbeat();
            Peer source = null;
            Peer target = null;
            try {
                source = peers.peer(spec.source(), spec);
                target = peers.peer(spec.target(), spec);
                Replication r = new Replication(spec, data.path("base").asText(), source, target, stats, x -> {}, metrics);
                replication = r;
                ObjectNode history = r.run();
                heartbeat();
                if (!data.path("doc_id").isNull()) {
                    completed.completed(data.path("database").asText(), data.path("doc_id").asText(), id(), JobData.info(r), data.path("start_time").asText());
                }
                ObjectNode result = Json.NODES.objectNode();
                result.set("history_body", history);
                finish(result);
                log.info("Replication `{}` completed", id());
                return;
            } catch (Replication.Stopped | InterruptedException e) {
                metrics.stops.increment();
                if (closing.getAsBoolean()) giveBack();
                return;
            } catch (RuntimeException e) {
                if (stopped || closing.getAsBoolean()) {
                    metrics.stops.increment();
                    return;
                }
                metrics.crashes.increment();
                ReplicationException re = e instanceof ReplicationException x ? x
                        : new ReplicationException(500, "unknown_error", e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage()), e);
                if (!(e instanceof ReplicationException)) log.warn("replication {} failed", id(), e);
                else log.warn("replication {} crashed: {}", id(), re.summary());
                if (transient_) {
                    finish(JobData.error(re));
                    return;
                }
                crashReason = re.summary();
                state = "crashing";
                event("crashed", re.summary());
                heartbeat();
                Duration wait = CrashBackoff.backoff(config.backoffBase(), CrashBackoff.consecutiveCrashes(data.get("history"), config.healthThreshold()));
                try {
                    Thread.sleep(wait.toMillis());
                } catch (InterruptedException ie) {
                    if (closing.getAsBoolean()) giveBack();
                    return;
                }
            } finally {
                replication = null;
                if (source != null) source.close();
                if (target != null) target.close();
            }
        }
    }

    /** This server is stopping: the job goes back to the queue now, for another server or the next start. */
    private void giveBack() {
        try {
            heartbeat();
            queue.release(lease);
            log.info("gave replication {} back to the queue", id());
        } catch (RuntimeException e) {
            log.info("could not give replication {} back; it is taken over after the activity timeout", id(), e);
        }
    }

    private void finish(ObjectNode result) {
        try {
            ObjectNode d;
            synchronized (data) {
                data.set("result", result);
                d = data.deepCopy();
            }
            queue.finish(lease, d);
        } catch (LeaseLostException e) {
            log.info("replication {}: finished after its job was removed", id());
        }
    }
}
