package dev.chaise.server;

import dev.chaise.http.config.HttpConfig;
import dev.chaise.replicator.ReplicationSpec;
import dev.chaise.replicator.ReplicatorConfig;
import java.time.Duration;
import java.util.function.IntSupplier;

/**
 * The replicator's settings from the ini: CouchDB's {@code [replicator]} keys with its defaults,
 * and Chaise's own timings under {@code [chaise]} (the crash backoff's base, how long a job's
 * lease lasts without a heartbeat), which tests shorten.
 */
final class ReplicatorSettings {
    private ReplicatorSettings() {}

    static ReplicatorConfig of(IniConfig c, String uuid, HttpConfig http, IntSupplier port) {
        ReplicationSpec.Defaults d = ReplicationSpec.Defaults.couchdb();
        ReplicationSpec.Defaults defaults = new ReplicationSpec.Defaults(
                intOf(c, "worker_processes", d.workerProcesses()),
                intOf(c, "worker_batch_size", d.workerBatchSize()),
                intOf(c, "http_connections", d.httpConnections()),
                intOf(c, "connection_timeout", (int) d.connectionTimeoutMs()),
                intOf(c, "retries_per_request", d.retries()),
                intOf(c, "checkpoint_interval", (int) d.checkpointIntervalMs()),
                Boolean.parseBoolean(c.get("replicator", "use_checkpoints", Boolean.toString(d.useCheckpoints()))),
                Boolean.parseBoolean(c.get("replicator", "use_bulk_get", Boolean.toString(d.useBulkGet()))));
        String bind = http.bindAddress();
        return new ReplicatorConfig(uuid, http.nodeName(), () -> "http://" + bind + ":" + port.getAsInt() + "/",
                intOf(c, "max_jobs", 500),
                Duration.ofMillis(Long.parseLong(c.get("chaise", "replicator_backoff_base_ms", "30000"))),
                Duration.ofSeconds(intOf(c, "health_threshold", 120)),
                intOf(c, "max_history", 20),
                Duration.ofMillis(Long.parseLong(c.get("chaise", "replicator_activity_timeout_ms", "30000"))),
                Duration.ofMillis(Long.parseLong(c.get("chaise", "replicator_heartbeat_ms", "5000"))),
                defaults,
                Boolean.parseBoolean(c.get("replicator", "verify_ssl_certificates", "false")),
                Duration.ofMillis(Long.parseLong(c.get("chaise", "replicator_docs_rescan_ms", "60000"))));
    }

    private static int intOf(IniConfig c, String key, int fallback) {
        return c.get("replicator", key).map(Integer::parseInt).orElse(fallback);
    }
}
