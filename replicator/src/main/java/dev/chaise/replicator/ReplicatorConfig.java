package dev.chaise.replicator;

import java.time.Duration;
import java.util.function.Supplier;

/**
 * The replicator's settings for one server.
 *
 * @param serverUuid the server's uuid, part of every replication id
 * @param nodeName the node name jobs run under, as {@code _scheduler} shows it
 * @param loopbackBase {@code http://{bind_address}:{port}/}: where CouchDB 3 would send a local name
 * @param maxJobs jobs this server runs at once
 * @param backoffBase the first wait after a crash (CouchDB: 30 s)
 * @param healthThreshold how long a job must run without crashing to count as healthy (CouchDB: 2 min)
 * @param maxHistory events a job keeps
 * @param activityTimeout how long a job's lease lasts without a heartbeat
 * @param heartbeat how often a running job proves it is alive and publishes its counters
 * @param defaults a replication's defaults ({@code [replicator]})
 * @param verifySsl whether remote peers' certificates are checked
 * @param docsRescan how often the {@code _replicator} database is read again without a write
 */
public record ReplicatorConfig(String serverUuid, String nodeName, Supplier<String> loopbackBase, int maxJobs, Duration backoffBase,
                               Duration healthThreshold, int maxHistory, Duration activityTimeout, Duration heartbeat,
                               ReplicationSpec.Defaults defaults, boolean verifySsl, Duration docsRescan) {
    public ReplicatorConfig withTimings(Duration backoffBase, Duration activityTimeout, Duration heartbeat) {
        return new ReplicatorConfig(serverUuid, nodeName, loopbackBase, maxJobs, backoffBase, healthThreshold, maxHistory, activityTimeout, heartbeat,
                defaults, verifySsl, docsRescan);
    }

    public static ReplicatorConfig defaults(String serverUuid, Supplier<String> loopbackBase) {
        return new ReplicatorConfig(serverUuid, "nonode@nohost", loopbackBase, 500, Duration.ofSeconds(30), Duration.ofMinutes(2), 20,
                Duration.ofSeconds(30), Duration.ofSeconds(5), ReplicationSpec.Defaults.couchdb(), false, Duration.ofSeconds(60));
    }
}
