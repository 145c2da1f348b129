package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.Storage;
import dev.chaise.storage.json.Json;
import dev.chaise.views.DocFilters;
import dev.chaise.views.jobs.JobQueue;
import dev.chaise.views.jobs.LeaseLostException;
import java.net.http.HttpClient;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replicator: {@code _replicate}, {@code _scheduler}, {@code _active_tasks} entries, and the
 * jobs behind them. A replication is a job of the KV job queue that builds views (type
 * {@value #JOB_TYPE}, id the replication id): whichever server of the deployment takes it holds its
 * lease and runs it, proving it alive every {@link Config#heartbeat}; a server that dies loses
 * its leases after the activity timeout and another takes its jobs over, and a server restarted
 * after a crash takes its own back at once ({@link JobQueue#requeueOrphans}). What {@code _scheduler}
 * shows of a job (state, history of events, counters) lives in the job's data, so every server
 * shows the same. Failures back off as CouchDB's scheduler backs off: 30 s doubling per
 * consecutive crash, up to 2^10 times that, a job that ran {@code health_threshold} without
 * crashing being healthy again.
 *
 * <p>Jobs from {@code _replicate} are transient: one that fails is removed and its error is the
 * request's answer, as in CouchDB. Jobs from {@code _replicator} documents ({@link ReplicatorDocs})
 * are retried until their document is deleted.
 */
public final class Replicator implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Replicator.class);
    static final String JOB_TYPE = "replication";
    static final DateTimeFormatter ISO = DateTimeFormatter.ISO_INSTANT;

    /**
     * @param serverUuid the server's uuid, part of every replication id
     * @param loopbackBase {@code http://{bind_address}:{port}/}: where CouchDB 3 would send a local name
     * @param backoffBase the first wait after a crash (CouchDB: 30 s)
     * @param healthThreshold how long a job must run without crashing to count as healthy (CouchDB: 2 min)
     * @param activityTimeout how long a job's lease lasts without a heartbeat
     * @param heartbeat how often a running job proves it is alive and publishes its counters
     */
    public record Config(String serverUuid, String nodeName, java.util.function.Supplier<String> loopbackBase, int maxJobs, Duration backoffBase,
                         Duration healthThreshold, int maxHistory, Duration activityTimeout, Duration heartbeat,
                         ReplicationSpec.Defaults defaults, boolean verifySsl, Duration docsRescan) {
        public Config withTimings(Duration backoffBase, Duration activityTimeout, Duration heartbeat) {
            return new Config(serverUuid, nodeName, loopbackBase, maxJobs, backoffBase, healthThreshold, maxHistory, activityTimeout, heartbeat, defaults,
                    verifySsl, docsRescan);
        }

        public static Config defaults(String serverUuid, java.util.function.Supplier<String> loopbackBase) {
            return new Config(serverUuid, "nonode@nohost", loopbackBase, 500, Duration.ofSeconds(30), Duration.ofMinutes(2), 20,
                    Duration.ofSeconds(30), Duration.ofSeconds(5), ReplicationSpec.Defaults.couchdb(), false, Duration.ofSeconds(60));
        }
    }

    final Storage storage;
    final DocFilters filters;
    final JobQueue queue;
    final LocalAccess access;
    final Config config;
    final HttpClient http;
    private final Map<String, Runner> running = new ConcurrentHashMap<>();
    private final AtomicInteger slots;
    private final List<Thread> threads = new ArrayList<>();
    private final ReplicatorDocs docs;
    private volatile boolean closed;

    public Replicator(Storage storage, DocFilters filters, JobQueue queue, LocalAccess access, Config config) {
        this.storage = storage;
        this.filters = filters;
        this.queue = queue;
        this.access = access;
        this.config = config;
        this.slots = new AtomicInteger(config.maxJobs());
        this.http = client(config);
        this.docs = new ReplicatorDocs(this);
    }

    private static HttpClient client(Config c) {
        HttpClient.Builder b = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofMillis(c.defaults().connectionTimeoutMs()))
                .followRedirects(HttpClient.Redirect.NORMAL)
                .executor(Executors.newVirtualThreadPerTaskExecutor());
        if (!c.verifySsl()) b.sslContext(trustAll()); // [replicator] verify_ssl_certificates = false, CouchDB's default
        return b.build();
    }

    private static SSLContext trustAll() {
        try {
            X509ExtendedTrustManager tm = new X509ExtendedTrustManager() {
                public void checkClientTrusted(X509Certificate[] c, String a) {}

                public void checkServerTrusted(X509Certificate[] c, String a) {}

                public void checkClientTrusted(X509Certificate[] c, String a, java.net.Socket s) {}

                public void checkServerTrusted(X509Certificate[] c, String a, java.net.Socket s) {}

                public void checkClientTrusted(X509Certificate[] c, String a, SSLEngine e) {}

                public void checkServerTrusted(X509Certificate[] c, String a, SSLEngine e) {}

                public X509Certificate[] getAcceptedIssuers() {
                    return new X509Certificate[0];
                }
            };
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, new TrustManager[] {tm}, new SecureRandom());
            return ctx;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Starts taking jobs, the activity monitor and the {@code _replicator} watcher. */
    public Replicator start() {
        // Jobs a crash of this node left running go back to the queue now, not after the activity timeout.
        int orphans = queue.requeueOrphans(JOB_TYPE);
        if (orphans > 0) log.info("re-queued {} replication job(s) left running by a previous process", orphans);
        threads.add(Thread.ofVirtual().name("replicator-acceptor").start(this::acceptLoop));
        threads.add(Thread.ofVirtual().name("replicator-monitor").start(this::monitorLoop));
        threads.add(Thread.ofVirtual().name("replicator-docs").start(docs::run));
        return this;
    }

    // ---------------------------------------------------------------- _replicate

    /** An answer to {@code POST /_replicate}. */
    public record Answer(int status, ObjectNode body) {}

    /**
     * {@code POST /_replicate}, as the request's user; {@code authorization} and {@code cookie}
     * are the request's headers (they make a local name's id, as in CouchDB 3).
     */
    public Answer replicate(JsonNode body, ReplicationSpec.RepUser user, String authorization, String cookie) throws InterruptedException {
        ReplicationSpec spec = ReplicationSpec.parse(body, user,
                new ReplicationSpec.Context(config.loopbackBase().get(), authorization == null ? "" : authorization, cookie == null ? "" : cookie, true, config.defaults()));
        if (spec.cancel()) return cancel(spec.cancelId() != null ? spec.cancelId() : fullId(spec), user);
        String id = fullId(spec);
        String base = id.substring(0, id.indexOf('+') < 0 ? id.length() : id.indexOf('+'));
        ObjectNode data = jobData(spec, id, base, null, null);
        queue.add(JOB_TYPE, id, data);
        log.info("replication {} added from _replicate ({} -> {})", id, spec.source().display(), spec.target().display());
        if (spec.continuous()) return new Answer(202, Json.NODES.objectNode().put("ok", true).put("_local_id", id));
        return awaitResult(id);
    }

    /** The id of a replication, its user filter's code fetched from the source (404 if it cannot be). */
    String fullId(ReplicationSpec spec) {
        String code = null;
        if (spec.userFilter()) code = filterCode(spec);
        String[] id = ReplicationId.compute(config.serverUuid(), spec, code);
        return id[0] + id[1];
    }

    /** couch_replicator_filters:fetch: the filter's source from the source's design document. */
    String filterCode(ReplicationSpec spec) {
        String f = spec.filter();
        int slash = f.indexOf('/');
        String ddoc = f.substring(0, slash);
        String name = f.substring(slash + 1);
        try (Peer src = peer(spec.source(), spec)) {
            ObjectNode doc = src.getDoc("_design/" + ddoc);
            if (doc == null) {
                throw new ReplicationException(404, "not_found", "Couldn't open document `_design/" + ddoc + "` from source database `" + src.uri() + "`: not_found");
            }
            JsonNode code = doc.path("filters").get(name);
            if (code == null || !code.isTextual()) {
                throw new ReplicationException(404, "not_found", "Couldn't parse filter code from document " + ddoc + " on `" + src.uri() + "`  Error: {not_found,missing}");
            }
            return code.textValue();
        } catch (ReplicationException e) {
            if (e.status() == 404 && e.error().equals("not_found")) throw e;
            throw new ReplicationException(404, "not_found", "Could not open source database `" + spec.source().display() + "`: " + e.summary());
        }
    }

    private Answer awaitResult(String id) throws InterruptedException {
        while (true) {
            Optional<JobQueue.Job> j = queue.awaitState(JOB_TYPE, id, JobQueue.State.FINISHED, Duration.ofSeconds(2));
            if (j.isPresent()) {
                JsonNode r = j.get().data().path("result");
                if (r.has("error")) throw new ReplicationException(r.path("status").asInt(500), r.path("error").asText(), r.path("reason").asText());
                ObjectNode out = Json.NODES.objectNode().put("ok", true);
                if (r.has("history_body")) out.setAll((ObjectNode) r.get("history_body"));
                return new Answer(200, out);
            }
            if (queue.get(JOB_TYPE, id).isEmpty()) return new Answer(200, Json.NODES.objectNode().put("ok", "stopped")); // cancelled
            if (Thread.interrupted()) throw new InterruptedException();
        }
    }

    private Answer cancel(String id, ReplicationSpec.RepUser user) {
        Optional<JobQueue.Job> j = queue.get(JOB_TYPE, id);
        if (j.isEmpty() || j.get().state() == JobQueue.State.FINISHED) throw new ReplicationException(404, "not_found", "missing");
        String owner = j.get().data().path("user").path("name").asText(null);
        if (!user.isAdmin() && (owner == null || !owner.equals(user.name()))) {
            throw new ReplicationException(401, "unauthorized", "You are not a server admin.");
        }
        removeJob(id);
        log.info("Replication '{}' cancelled", id);
        return new Answer(200, Json.NODES.objectNode().put("ok", true).put("_local_id", id));
    }

    /** Removes a job from the queue; its runner stops at once here, or at its next heartbeat on another server. */
    void removeJob(String id) {
        queue.remove(JOB_TYPE, id);
        Runner r = running.get(id);
        if (r != null) r.stop();
    }

    ObjectNode jobData(ReplicationSpec spec, String id, String base, String database, String docId) {
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

    static String now() {
        return ISO.format(Instant.now().truncatedTo(ChronoUnit.SECONDS));
    }

    // ---------------------------------------------------------------- peers

    /** One side of a replication; nothing is opened until the run asks (source first, then target, as CouchDB). */
    Peer peer(Endpoint e, ReplicationSpec spec) {
        return switch (e) {
            case Endpoint.Local l -> new LocalPeer(l.db(), access, filters, spec.user());
            case Endpoint.Remote r -> new HttpPeer(http, r, spec.connectionTimeoutMs(), spec.retries());
        };
    }

    // ---------------------------------------------------------------- the scheduler

    private void acceptLoop() {
        while (!closed) {
            try {
                if (slots.get() <= 0) {
                    Thread.sleep(1000);
                    continue;
                }
                Optional<JobQueue.Lease> lease = queue.accept(JOB_TYPE, Duration.ofSeconds(30));
                if (lease.isEmpty()) continue;
                slots.decrementAndGet();
                Runner r = new Runner(lease.get());
                running.put(lease.get().jobId(), r);
                r.thread = Thread.ofVirtual().name("replication-" + lease.get().jobId()).start(() -> {
                    try {
                        r.run();
                    } finally {
                        running.remove(lease.get().jobId(), r);
                        slots.incrementAndGet();
                    }
                });
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (closed) return;
                log.warn("taking a replication job failed", e);
                sleepQuietly(1000);
            }
        }
    }

    private void monitorLoop() {
        var seen = new HashMap<String, com.apple.foundationdb.tuple.Versionstamp>();
        while (!closed) {
            try {
                Thread.sleep(config.activityTimeout().toMillis());
                int n = queue.requeueStale(JOB_TYPE, seen);
                if (n > 0) log.info("re-queued {} replication job(s) whose server went quiet", n);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (!closed) log.warn("the replication activity monitor failed a pass", e);
            }
        }
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Consecutive crashes in a job's history: crashes each within the health threshold of the event before. */
    static int consecutiveCrashes(JsonNode history, Duration healthThreshold) {
        int count = 0;
        for (int i = 0; i < history.size(); i++) {
            JsonNode e = history.get(i);
            String type = e.path("type").asText();
            if (type.equals("crashed")) {
                if (i + 1 >= history.size()) return count; // a crash with nothing before it does not count, as in CouchDB
                Instant crash = Instant.parse(e.path("timestamp").asText());
                Instant prev = Instant.parse(history.get(i + 1).path("timestamp").asText());
                if (Duration.between(prev, crash).compareTo(healthThreshold) > 0) return count;
                count++;
            } else if (type.equals("stopped") && i + 1 < history.size() && history.get(i + 1).path("type").asText().equals("started")) {
                return count;
            }
        }
        return count;
    }

    /** backoff_micros: base * 2^(crashes - 1), the exponent at most 10; none for no consecutive crash. */
    static Duration backoff(Duration base, int crashes) {
        if (crashes <= 0) return Duration.ZERO; // a crash after a healthy run is retried at once
        int exp = Math.min(crashes - 1, 10);
        return base.multipliedBy(1L << exp);
    }

    /** One job held by this server: runs its replication, restarting it after crashes with backoff. */
    final class Runner {
        final JobQueue.Lease lease;
        final ObjectNode data;
        volatile Thread thread;
        volatile Replication replication;
        volatile boolean stopped;
        volatile String state = "initializing";
        volatile String crashReason;

        Runner(JobQueue.Lease lease) {
            this.lease = lease;
            this.data = ((ObjectNode) lease.data()).deepCopy();
        }

        String id() {
            return lease.jobId();
        }

        void stop() {
            stopped = true;
            Thread t = thread;
            if (t != null) t.interrupt();
        }

        private void event(String type, String reason) {
            synchronized (data) {
                ArrayNode h = (ArrayNode) data.get("history");
                ObjectNode e = Json.NODES.objectNode().put("timestamp", now()).put("type", type);
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
                data.put("pid", "<" + config.nodeName() + "." + Long.toHexString(thread == null ? 0 : thread.threadId()) + ">");
                Replication r = replication;
                if (r != null) data.set("info", info(r));
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
                while (!stopped && !closed) {
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
            while (!stopped && !closed) {
                ReplicationSpec spec;
                try {
                    spec = ReplicationSpec.parse(data.get("rep"), user(data), new ReplicationSpec.Context(config.loopbackBase().get(), null, null, true, config.defaults()));
                } catch (ReplicationException e) {
                    finish(error(e));
                    return;
                }
                state = "running";
                crashReason = null;
                event("started", null);
                heartbeat();
                Peer source = null;
                Peer target = null;
                try {
                    source = peer(spec.source(), spec);
                    target = peer(spec.target(), spec);
                    Replication r = new Replication(spec, data.path("base").asText(), source, target, stats, x -> {});
                    replication = r;
                    ObjectNode history = r.run();
                    heartbeat();
                    if (!data.path("doc_id").isNull()) docs.completed(data.path("database").asText(), data.path("doc_id").asText(), id(), info(r), data.path("start_time").asText());
                    ObjectNode result = Json.NODES.objectNode();
                    result.set("history_body", history);
                    finish(result);
                    log.info("Replication `{}` completed", id());
                    return;
                } catch (Replication.Stopped | InterruptedException e) {
                    if (closed) giveBack();
                    return;
                } catch (RuntimeException e) {
                    if (stopped || closed) return;
                    ReplicationException re = e instanceof ReplicationException x ? x
                            : new ReplicationException(500, "unknown_error", e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage()), e);
                    if (!(e instanceof ReplicationException)) log.warn("replication {} failed", id(), e);
                    else log.warn("replication {} crashed: {}", id(), re.summary());
                    if (transient_) {
                        finish(error(re));
                        return;
                    }
                    crashReason = re.summary();
                    state = "crashing";
                    event("crashed", re.summary());
                    heartbeat();
                    Duration wait = backoff(config.backoffBase(), consecutiveCrashes(data.get("history"), config.healthThreshold()));
                    try {
                        Thread.sleep(wait.toMillis());
                    } catch (InterruptedException ie) {
                        if (closed) giveBack();
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

    static ObjectNode error(ReplicationException e) {
        return Json.NODES.objectNode().put("error", e.error()).put("reason", e.reason()).put("status", e.status());
    }

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

    // ---------------------------------------------------------------- _scheduler

    /** {@code GET /_scheduler/jobs}: every replication waiting or running, by id. */
    public ObjectNode jobs(int skip, int limit) {
        List<ObjectNode> all = new ArrayList<>();
        for (JobQueue.Job j : queue.list(JOB_TYPE)) {
            if (j.state() == JobQueue.State.FINISHED) continue;
            all.add(jobJson(j));
        }
        all.sort(Comparator.comparing(o -> o.path("id").asText()));
        return page("jobs", all.size(), all, skip, limit);
    }

    /** A {@code _scheduler} listing: {@code total_rows}, {@code offset} and the page of {@code rows} under {@code name}. */
    static ObjectNode page(String name, long total, List<ObjectNode> rows, int skip, int limit) {
        ObjectNode out = Json.NODES.objectNode();
        out.put("total_rows", total);
        int offset = Math.min(skip, rows.size());
        out.put("offset", offset);
        ArrayNode a = out.putArray(name);
        rows.subList(offset, Math.min(rows.size(), offset + Math.max(0, limit))).forEach(a::add);
        return out;
    }

    /** {@code GET /_scheduler/jobs/{id}}: 404 if no such replication is waiting or running. */
    public ObjectNode job(String id) {
        String full = id.replace(' ', '+');
        return queue.get(JOB_TYPE, full).filter(j -> j.state() != JobQueue.State.FINISHED).map(this::jobJson)
                .orElseThrow(() -> new ReplicationException(404, "not_found", "missing"));
    }

    /** couch_replicator_scheduler:job_ejson. */
    ObjectNode jobJson(JobQueue.Job j) {
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
        Runner r = running.get(j.id());
        if (r == null || j.state() != JobQueue.State.RUNNING) return j.data();
        ObjectNode d;
        synchronized (r.data) {
            d = r.data.deepCopy();
        }
        Replication rep = r.replication;
        if (rep != null) d.set("info", info(rep));
        d.put("state", r.state);
        if (r.crashReason != null) d.put("crash_reason", r.crashReason);
        d.put("node", config.nodeName());
        return d;
    }

    /**
     * The state of one job as {@code _scheduler/docs} shows it (job_summary): running, pending or
     * crashing, with counters or the crash reason, or null if there is no such job.
     */
    ObjectNode jobSummary(String id) {
        Optional<JobQueue.Job> j = queue.get(JOB_TYPE, id);
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
        o.put("error_count", consecutiveCrashes(d.path("history"), config.healthThreshold()));
        JsonNode h = d.path("history");
        o.set("last_updated", h.size() > 0 ? h.get(0).path("timestamp") : d.path("start_time"));
        o.set("start_time", d.path("start_time"));
        o.putNull("source_proxy");
        o.putNull("target_proxy");
        return o;
    }

    /** {@code _active_tasks} entries of type replication for the jobs this server runs. */
    public List<ObjectNode> activeTasks() {
        List<ObjectNode> out = new ArrayList<>();
        for (Runner r : running.values()) {
            Replication rep = r.replication;
            if (rep == null) continue;
            ObjectNode t = Json.NODES.objectNode();
            t.put("node", config.nodeName());
            t.put("pid", "<" + config.nodeName() + "." + Long.toHexString(r.thread == null ? 0 : r.thread.threadId()) + ">");
            t.put("type", "replication");
            t.set("user", r.data.path("user").path("name"));
            t.put("replication_id", r.id());
            t.set("database", r.data.path("database"));
            t.set("doc_id", r.data.path("doc_id"));
            t.put("source", rep.sourceName());
            t.put("target", rep.targetName());
            t.put("continuous", r.data.path("continuous").asBoolean(false));
            t.put("checkpoint_interval", r.data.path("checkpoint_interval").asLong(config.defaults().checkpointIntervalMs()));
            t.setAll(info(rep));
            long started = Instant.parse(r.data.path("start_time").asText(now())).getEpochSecond();
            t.put("started_on", started);
            t.put("updated_on", Instant.now().getEpochSecond());
            out.add(t);
        }
        return out;
    }

    /** The {@code _replicator} database's side: documents, their states, {@code _scheduler/docs}. */
    public ReplicatorDocs docs() {
        return docs;
    }

    @Override
    public void close() {
        closed = true;
        threads.forEach(Thread::interrupt);
        for (Runner r : running.values()) r.stop();
        for (Runner r : running.values()) {
            Thread t = r.thread;
            if (t != null) {
                try {
                    t.join(TimeUnit.SECONDS.toMillis(5));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        http.shutdownNow(); // live feeds would otherwise keep it open
    }
}
