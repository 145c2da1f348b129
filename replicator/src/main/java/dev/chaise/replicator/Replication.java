package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.json.Json;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of a replication, as {@code couch_replicator_scheduler_job} runs it: find the
 * checkpoints on both sides and agree where to start, read the source's changes into a bounded
 * queue, let {@code worker_processes} workers take batches of {@code worker_batch_size} changes
 * (ask the target what it lacks, read those revisions, write them with {@code new_edits: false}),
 * and record a checkpoint on both sides every {@code checkpoint_interval} and at the end, up to
 * the highest sequence below which every batch is done.
 */
final class Replication {
    private static final Logger log = LoggerFactory.getLogger(Replication.class);
    static final int REP_ID_VERSION = 4;
    private static final DateTimeFormatter RFC1123 = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US);

    /** The replication was stopped (cancelled, its document deleted, its server stopping). */
    static final class Stopped extends RuntimeException {
        Stopped() {
            super("stopped", null, false, false);
        }
    }

    /** What the scheduler and {@code _active_tasks} read while a run goes on. */
    interface Progress {
        void update(Replication r);
    }

    private record Batch(long ts, List<Peer.Change> changes, JsonNode reportSeq) {}

    private final ReplicationSpec spec;
    private final String baseId;
    private final Peer source;
    private final Peer target;
    final Stats stats;
    private final Progress progress;
    private final String sessionId = HexFormat.of().formatHex(randomBytes());
    private final ZonedDateTime startTime = ZonedDateTime.now(ZoneOffset.UTC);

    private ObjectNode sourceLog;
    private ObjectNode targetLog;
    private ArrayNode history = Json.NODES.arrayNode();
    private JsonNode startSeq;
    private String srcStartTime;
    private String tgtStartTime;

    // seq bookkeeping, under this object's monitor
    private final TreeMap<Long, JsonNode> inProgress = new TreeMap<>();
    private long highestDoneTs = -1;
    private JsonNode highestDone;
    private JsonNode throughSeq;
    private JsonNode committedSeq;
    private ObjectNode checkpointHistory;
    private volatile JsonNode sourceSeq;
    private volatile Long pending;
    private volatile long pendingAt;

    private final List<Thread> threads = new ArrayList<>();
    private volatile Throwable failure;
    private volatile boolean stopping;

    private final ReplicatorMetrics metrics;

    Replication(ReplicationSpec spec, String baseId, Peer source, Peer target, Stats stats, Progress progress, ReplicatorMetrics metrics) {
        this.spec = spec;
        this.metrics = metrics;
        this.baseId = baseId;
        this.source = source;
        this.target = target;
        this.stats = stats;
        this.progress = progress;
    }

    String sourceName() {
        return source.uri();
    }

    String targetName() {
        return target.uri();
    }

    synchronized JsonNode throughSeq() {
        return throughSeq;
    }

    synchronized JsonNode checkpointedSeq() {
        return committedSeq;
    }

    JsonNode sourceSeq() {
        return sourceSeq;
    }

    /** Changes left to replicate, as the source counts them, at most every connection timeout. */
    Long changesPending() {
        return pending;
    }

    private void refreshPending() {
        long now = System.nanoTime();
        if (pendingAt != 0 && now - pendingAt < TimeUnit.MILLISECONDS.toNanos(Math.min(spec.connectionTimeoutMs(), 10_000))) return;
        pendingAt = now;
        JsonNode at;
        synchronized (this) {
            at = highestDone != null ? highestDone : startSeq;
        }
        pending = source.pending(at);
    }

    // ---------------------------------------------------------------- the run

    /**
     * Runs to the end of the source's changes (one-shot) or until stopped (continuous). Returns
     * the checkpoint history, CouchDB's answer to a one-shot {@code _replicate}.
     */
    ObjectNode run() throws InterruptedException {
        try {
            init();
        } catch (RuntimeException e) {
            metrics.failedStarts.increment(); // couch_replicator_scheduler_job: init failed
            throw e;
        }
        refreshPendingNow();
        BlockingQueue<Object> queue = new ArrayBlockingQueue<>(Math.max(2, spec.workerBatchSize() * spec.workerProcesses() * 2));
        Object end = new Object();
        Thread reader = Thread.ofVirtual().name("replication-changes-" + baseId).unstarted(() -> readChanges(queue, end));
        threads.add(reader);
        BatchSource batches = new BatchSource(queue, end, spec.workerBatchSize());
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < spec.workerProcesses(); i++) {
            Thread w = Thread.ofVirtual().name("replication-worker-" + baseId + "-" + i).unstarted(() -> work(batches));
            workers.add(w);
            threads.add(w);
        }
        reader.start();
        workers.forEach(Thread::start);
        metrics.workersStarted.add(workers.size());
        long nextCheckpoint = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(spec.checkpointIntervalMs());
        try {
            while (true) {
                boolean alive = false;
                for (Thread w : workers) {
                    w.join(200);
                    alive |= w.isAlive();
                    if (failure != null) break;
                }
                if (failure != null) throw rethrow(failure);
                progress.update(this);
                if (!alive) break;
                if (System.nanoTime() >= nextCheckpoint) {
                    checkpoint();
                    refreshPending();
                    nextCheckpoint = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(spec.checkpointIntervalMs());
                }
            }
            // every batch is done: the last checkpoint covers all of them
            synchronized (this) {
                if (highestDone != null) throughSeq = highestDone;
            }
            if (highestDone == null) {
                if (checkpointHistory == null) checkpointHistory = noChanges();
            } else {
                checkpoint();
            }
            refreshPendingNow();
            progress.update(this);
            return checkpointHistory;
        } catch (InterruptedException | Stopped e) {
            stopping = true;
            threads.forEach(Thread::interrupt);
            for (Thread t : threads) t.join(5_000);
            try {
                checkpoint(); // as CouchDB's terminate(shutdown): what is done is kept
            } catch (RuntimeException ce) {
                log.info("replication {}: the last checkpoint failed: {}", baseId, ce.getMessage());
            }
            throw e;
        } finally {
            stopping = true;
            threads.forEach(Thread::interrupt);
        }
    }

    private void refreshPendingNow() {
        pendingAt = 0;
        refreshPending();
    }

    private ObjectNode noChanges() {
        ObjectNode h = Json.NODES.objectNode().put("no_changes", true);
        if (sourceLog != null) {
            sourceLog.properties().forEach(e -> {
                if (!e.getKey().equals("_id") && !e.getKey().equals("_rev")) h.set(e.getKey(), e.getValue());
            });
        }
        return h;
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) return r;
        if (t instanceof Error e) throw e;
        return new IllegalStateException(t);
    }

    private void fail(Throwable t) {
        if (stopping || t instanceof Stopped) return;
        if (failure == null) failure = t;
    }

    // ---------------------------------------------------------------- start: checkpoints

    private void init() {
        ObjectNode srcInfo = source.info();
        if (spec.createTarget()) target.create(spec.createTargetParams());
        ObjectNode tgtInfo = target.info();
        srcStartTime = srcInfo.path("instance_start_time").asText("0");
        tgtStartTime = tgtInfo.path("instance_start_time").asText("0");
        sourceSeq = srcInfo.get("update_seq");
        String logId = "_local/" + baseId;
        sourceLog = spec.useCheckpoints() ? source.getLocal(logId) : null;
        targetLog = spec.useCheckpoints() ? target.getLocal(logId) : null;
        JsonNode found = compareLogs(sourceLog, targetLog);
        if (found == null || isZero(found)) {
            startSeq = spec.sinceSeq() != null ? spec.sinceSeq() : Json.NODES.numberNode(0);
        } else {
            startSeq = found;
        }
        if (history.size() > 0) stats.atLeast(history.get(0));
        throughSeq = startSeq;
        committedSeq = startSeq;
        log.info("Starting replication {} ({} -> {}) from {} session {}", baseId, source.uri(), target.uri(), startSeq, sessionId);
    }

    private static boolean isZero(JsonNode s) {
        return (s.isNumber() && s.asLong() == 0) || (s.isTextual() && s.textValue().equals("0"));
    }

    /** compare_replication_logs: the sequence both sides agree on, and the history to go on with. */
    private JsonNode compareLogs(ObjectNode src, ObjectNode tgt) {
        if (src == null || tgt == null) return null;
        if (src.path("session_id").equals(tgt.path("session_id")) && src.has("session_id")) {
            if (src.get("history") instanceof ArrayNode h) history = h.deepCopy();
            return src.get("source_last_seq");
        }
        JsonNode sh = src.path("history");
        JsonNode th = tgt.path("history");
        for (int i = 0; i < Math.min(sh.size(), th.size()); i++) {
            JsonNode s = sh.get(i);
            JsonNode t = th.get(i);
            if (hasSession(s.path("session_id"), th, i)) {
                history = rest(sh, i + 1);
                return s.get("recorded_seq");
            }
            if (hasSession(t.path("session_id"), sh, i + 1)) {
                history = rest(th, i + 1);
                return t.get("recorded_seq");
            }
        }
        return null;
    }

    private static boolean hasSession(JsonNode session, JsonNode list, int from) {
        for (int i = from; i < list.size(); i++) if (list.get(i).path("session_id").equals(session)) return true;
        return false;
    }

    private static ArrayNode rest(JsonNode list, int from) {
        ArrayNode a = Json.NODES.arrayNode();
        for (int i = from; i < list.size(); i++) a.add(list.get(i).deepCopy());
        return a;
    }

    // ---------------------------------------------------------------- changes reader

    private void readChanges(BlockingQueue<Object> queue, Object end) {
        JsonNode since = startSeq;
        try {
            int retriesLeft = spec.retries();
            while (true) {
                JsonNode[] last = {since};
                Peer.ChangesQuery q = new Peer.ChangesQuery(since, spec.continuous(), spec.winningRevsOnly(), spec.docIds(), spec.selector(),
                        spec.filter(), spec.queryParams(), Math.max(1000, spec.connectionTimeoutMs() / 3));
                try {
                    source.changes(q, new Peer.ChangesSink() {
                        @Override
                        public void change(Peer.Change c) throws InterruptedException {
                            queue.put(c);
                            last[0] = c.seq();
                        }

                        @Override
                        public void lastSeq(JsonNode seq) throws InterruptedException {
                            if (spec.continuous() && seq != null && !seq.equals(last[0])) queue.put(new LastSeq(seq));
                            if (seq != null) last[0] = seq;
                        }
                    });
                } catch (ReplicationException e) {
                    metrics.changesReadFailures.increment();
                    if (!spec.continuous() || retriesLeft-- <= 0 || e.status() < 500) throw e;
                    Thread.sleep(1000); // a live feed that broke: read again from where it was
                }
                since = last[0];
                sourceSeq = since;
                if (!spec.continuous()) break;
            }
            queue.put(end);
        } catch (InterruptedException | Stopped e) {
            // stopped
        } catch (Throwable t) {
            metrics.changesReaderDeaths.increment();
            fail(t);
        }
    }

    /** The end of a live feed's round: its last_seq, which a filtered feed may have moved past the last change. */
    private record LastSeq(JsonNode seq) {}

    /** The changes manager: batches for the workers, each numbered in feed order. */
    private final class BatchSource {
        private final BlockingQueue<Object> queue;
        private final Object end;
        private final int size;
        private long ts;
        private boolean closed;

        BatchSource(BlockingQueue<Object> queue, Object end, int size) {
            this.queue = queue;
            this.end = end;
            this.size = size;
        }

        /** The next batch, or null once the feed has ended. */
        synchronized Batch next() throws InterruptedException {
            if (closed) return null;
            Object first = queue.take();
            if (first == end) {
                closed = true;
                return null;
            }
            List<Object> items = new ArrayList<>();
            items.add(first);
            while (items.size() < size) {
                Object o = queue.peek();
                if (o == null || o == end) break;
                items.add(queue.poll());
            }
            List<Peer.Change> changes = new ArrayList<>(items.size());
            JsonNode report = null;
            for (Object o : items) {
                if (o instanceof Peer.Change c) {
                    changes.add(c);
                    report = c.seq();
                } else if (o instanceof LastSeq l) {
                    report = l.seq();
                }
            }
            Batch b = new Batch(ts++, changes, report);
            synchronized (Replication.this) {
                inProgress.put(b.ts(), b.reportSeq());
            }
            return b;
        }
    }

    // ---------------------------------------------------------------- workers

    private void work(BatchSource batches) {
        try {
            for (Batch b = batches.next(); b != null; b = batches.next()) {
                if (!b.changes().isEmpty()) replicate(b.changes());
                done(b);
            }
        } catch (InterruptedException | Stopped e) {
            // stopped
        } catch (Throwable t) {
            metrics.workerDeaths.increment();
            fail(t);
        }
    }

    /** report_seq_done: the through sequence moves when the oldest batch in progress is done. */
    private synchronized void done(Batch b) {
        Long first = inProgress.firstKey();
        inProgress.remove(b.ts());
        if (b.ts() > highestDoneTs) {
            highestDoneTs = b.ts();
            highestDone = b.reportSeq();
        }
        if (first == b.ts()) throughSeq = b.reportSeq();
        if (inProgress.isEmpty() && highestDone != null) throughSeq = highestDone;
    }

    /**
     * couch_replicator_worker's revs_diff ratio: a moving average of the share of revisions the
     * target lacked. Past 95 % (an empty target) _revs_diff is skipped and every revision taken as
     * missing (writes with new_edits=false are idempotent), tried again every 37 s.
     */
    private double missingRatio;
    private long revsDiffAtNanos = System.nanoTime();

    private synchronized boolean attemptRevsDiff() {
        return missingRatio <= 0.95 || System.nanoTime() - revsDiffAtNanos > TimeUnit.SECONDS.toNanos(37);
    }

    private synchronized void revsDiffDone(long onTarget, long attempts) {
        double ratio = attempts > 0 ? (double) (attempts - onTarget) / attempts : 0;
        missingRatio = 0.4 * (ratio - missingRatio) + missingRatio;
        revsDiffAtNanos = System.nanoTime();
    }

    private void replicate(List<Peer.Change> changes) {
        Map<String, List<String>> revs = new LinkedHashMap<>();
        long checked = 0;
        for (Peer.Change c : changes) {
            revs.computeIfAbsent(c.id(), k -> new ArrayList<>()).addAll(c.revs());
            checked += c.revs().size();
        }
        Map<String, Peer.RevsDiffEntry> missing;
        if (attemptRevsDiff()) {
            missing = target.revsDiff(revs);
            long withoutAncestors = 0;
            for (Peer.RevsDiffEntry e : missing.values()) if (e.possibleAncestors().isEmpty()) withoutAncestors += e.missing().size();
            revsDiffDone(checked - withoutAncestors, checked);
        } else {
            missing = new LinkedHashMap<>();
            for (Map.Entry<String, List<String>> e : revs.entrySet()) missing.put(e.getKey(), new Peer.RevsDiffEntry(e.getValue(), List.of()));
        }
        stats.missingChecked.addAndGet(checked);
        List<Peer.Wanted> wanted = new ArrayList<>();
        for (Map.Entry<String, Peer.RevsDiffEntry> e : missing.entrySet()) {
            for (String rev : e.getValue().missing()) wanted.add(new Peer.Wanted(e.getKey(), rev, e.getValue().possibleAncestors()));
        }
        stats.missingFound.addAndGet(wanted.size());
        if (wanted.isEmpty()) return;
        List<ObjectNode> batch = new ArrayList<>();
        Peer.FetchSink sink = f -> {
            stats.docsRead.incrementAndGet();
            if (f.attachments().isEmpty()) {
                batch.add(f.doc());
                return;
            }
            Peer.WriteError err = target.writeDoc(f); // streamed now, while the source's stream is open
            if (err == null) stats.docsWritten.incrementAndGet();
            else writeFailed(err);
        };
        // As couch_replicator_worker: design documents are fetched one by one, the others with
        // _bulk_get, and only those count as bulk_get_attempts.
        List<Peer.Wanted> designs = new ArrayList<>();
        List<Peer.Wanted> others = new ArrayList<>();
        for (Peer.Wanted w : wanted) (w.id().startsWith(DocumentJson.DESIGN_PREFIX) ? designs : others).add(w);
        if (!designs.isEmpty()) source.fetch(designs, false, sink);
        int viaBulkGet = others.isEmpty() ? 0 : source.fetch(others, spec.useBulkGet(), sink);
        if (spec.useBulkGet()) {
            stats.bulkGetAttempts.addAndGet(others.size());
            stats.bulkGetDocs.addAndGet(viaBulkGet);
        }
        if (batch.isEmpty()) return;
        List<Peer.WriteError> errors = target.writeDocs(batch);
        stats.docsWritten.addAndGet(batch.size() - errors.size());
        errors.forEach(this::writeFailed);
    }

    private void writeFailed(Peer.WriteError e) {
        stats.docWriteFailures.incrementAndGet();
        log.warn("Replicator: couldn't write document `{}`, revision `{}`, to target database `{}`. Error: `{}`, reason: `{}`.",
                e.id(), e.rev(), target.uri(), e.error(), e.reason());
    }

    // ---------------------------------------------------------------- checkpoints

    /** do_checkpoint, counted as CouchDB counts it: recorded, or failed. */
    synchronized void checkpoint() {
        boolean recorded;
        try {
            recorded = record();
        } catch (RuntimeException e) {
            metrics.checkpointsFailure.increment();
            throw e;
        }
        if (recorded) metrics.checkpointsSuccess.increment();
    }

    /** The same history on both sides, so either may be asked later where to resume; false if there was nothing to record. */
    private boolean record() {
        if (!spec.useCheckpoints()) {
            checkpointHistory = Json.NODES.objectNode().put("use_checkpoints", false);
            return false;
        }
        JsonNode seq = throughSeq;
        if (seq == null || seq.equals(committedSeq)) return false;
        String src = source.ensureFullCommit();
        String tgt = target.ensureFullCommit();
        if (!src.equals(srcStartTime) && !src.equals("0") && !srcStartTime.equals("0")) {
            throw new ReplicationException(500, "checkpoint_commit_failure", "instance_start_time on source database has changed since last checkpoint.");
        }
        if (!tgt.equals(tgtStartTime) && !tgt.equals("0") && !tgtStartTime.equals("0")) {
            throw new ReplicationException(500, "checkpoint_commit_failure", "instance_start_time on target database has changed since last checkpoint.");
        }
        String start = RFC1123.format(startTime);
        String now = RFC1123.format(ZonedDateTime.now(ZoneOffset.UTC));
        ObjectNode entry = Json.NODES.objectNode();
        entry.put("session_id", sessionId);
        entry.put("start_time", start);
        entry.put("end_time", now);
        entry.set("start_last_seq", startSeq);
        entry.set("end_last_seq", seq);
        entry.set("recorded_seq", seq);
        entry.put("missing_checked", stats.missingChecked.get());
        entry.put("missing_found", stats.missingFound.get());
        entry.put("docs_read", stats.docsRead.get());
        entry.put("docs_written", stats.docsWritten.get());
        entry.put("doc_write_failures", stats.docWriteFailures.get());
        entry.put("bulk_get_docs", stats.bulkGetDocs.get());
        entry.put("bulk_get_attempts", stats.bulkGetAttempts.get());
        ObjectNode rec = Json.NODES.objectNode();
        rec.put("session_id", sessionId);
        rec.set("source_last_seq", seq);
        rec.put("replication_id_version", REP_ID_VERSION);
        if (spec.docIds() != null) {
            rec.put("start_time", start);
            rec.put("end_time", now);
            rec.put("docs_read", stats.docsRead.get());
            rec.put("docs_written", stats.docsWritten.get());
            rec.put("doc_write_failures", stats.docWriteFailures.get());
        }
        ArrayNode h = rec.putArray("history");
        h.add(entry);
        for (int i = 0; i < history.size() && h.size() < 50; i++) h.add(history.get(i));
        String logId = "_local/" + baseId;
        try {
            source.putLocal(logId, rec);
        } catch (ReplicationException e) {
            throw new ReplicationException(500, "checkpoint_commit_failure", "Error updating the source checkpoint document: " + e.reason());
        }
        try {
            target.putLocal(logId, rec);
        } catch (ReplicationException e) {
            throw new ReplicationException(500, "checkpoint_commit_failure", "Error updating the target checkpoint document: " + e.reason());
        }
        checkpointHistory = rec;
        committedSeq = seq;
        log.debug("recorded a checkpoint for {} -> {} at source update_seq {}", source.uri(), target.uri(), seq);
        return true;
    }

    private static byte[] randomBytes() {
        byte[] b = new byte[16];
        ThreadLocalRandom.current().nextBytes(b);
        return b;
    }
}
