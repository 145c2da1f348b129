package dev.chaise.views;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.Database;
import dev.chaise.storage.Sequence;
import dev.chaise.storage.Storage;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import dev.chaise.views.index.DesignDoc;
import dev.chaise.views.index.MapIndexSubspace;
import dev.chaise.views.index.ReduceTree;
import dev.chaise.views.index.ViewException;
import dev.chaise.views.index.ViewIndexer;
import dev.chaise.views.jobs.JobQueue;
import dev.chaise.views.jobs.JobWorkerPool;
import dev.chaise.views.js.MapProgram;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Owns bringing indexes up to date (RFC E): one build at a time per index, as a job of the KV
 * queue once {@link #useJobQueue} is called (any server's workers take it; the caller waits),
 * else in the calling thread under a per-index lock. Every build shows in {@link #tasks()}.
 */
public final class IndexBuilds implements AutoCloseable {
    static final String JOB_TYPE = "views";

    private final Storage storage;
    private final DesignDocs designs;
    private final IndexPrograms programs;
    private final ViewIndexer indexer;
    private final int workers;
    private final ConcurrentHashMap<String, ReentrantLock> building = new ConcurrentHashMap<>();
    private final ActiveTasks tasks = new ActiveTasks();
    private volatile JobQueue jobs;
    private JobWorkerPool pool;

    /**
     * @param workers threads for a first build; {@code segmentDocs} changes each one takes at a time
     * @param treeOrder the fan-out of the reduce trees new indexes get
     */
    IndexBuilds(Storage storage, DesignDocs designs, IndexPrograms programs, int workers, int segmentDocs, ReduceTree.Order treeOrder) {
        this.storage = storage;
        this.designs = designs;
        this.programs = programs;
        this.workers = workers;
        this.indexer = new ViewIndexer(segmentDocs, programs::reducers, treeOrder);
    }

    /**
     * Builds run as jobs of the KV queue from now on, taken by {@code builders} threads here and by
     * any other server on the same cluster; a query adds the index's job and waits for it.
     */
    void useJobQueue(JobQueue queue, int builders, Duration activityTimeout) {
        this.jobs = queue;
        this.pool = new JobWorkerPool(queue, JOB_TYPE, builders, activityTimeout, this::runJob);
    }

    /** Index builds running in this process and their totals since start ({@code _active_tasks}, metrics). */
    public ActiveTasks tasks() {
        return tasks;
    }

    /** Brings the design document's indexes up to the database's current update seq. */
    Sequence refresh(Database db, DesignDoc ddoc) {
        record Seqs(Sequence target, Sequence now) {}
        Seqs q = db.read(r -> new Seqs(r.updateSeq(), MapIndexSubspace.updateSeq(r.tx(), r.handle(), ddoc.signature())));
        Sequence target = q.target();
        Sequence now = q.now();
        if (target == null || (now != null && now.compareTo(target) >= 0)) {
            if (now != null && !ddoc.interactive()) completeTrees(db, ddoc, now);
            return now;
        }
        if (jobs != null) return buildAsJob(db, ddoc, target);
        ReentrantLock lock = lock(db, ddoc);
        lock.lock();
        try {
            return build(db, ddoc, target, null);
        } finally {
            lock.unlock();
        }
    }

    /** Adds the index's build job unless it is current; does not wait for it. False when builds do not run as jobs. */
    boolean request(Database db, DesignDoc ddoc) {
        JobQueue q = jobs;
        if (q == null) return false;
        boolean behind = db.read(r -> {
            Sequence target = r.updateSeq();
            Sequence now = MapIndexSubspace.updateSeq(r.tx(), r.handle(), ddoc.signature());
            return target != null && (now == null || now.compareTo(target) < 0);
        });
        if (behind) q.add(JOB_TYPE, jobId(db, ddoc), jobData(db, ddoc));
        return true;
    }

    /**
     * An interactive index's background build up to its creation versionstamp, in the calling
     * thread; after it the index is {@code READY} and answers from its rows.
     */
    void buildInteractive(Database db, DesignDoc ddoc, Sequence creation) {
        String sig = ddoc.signature();
        ReentrantLock lock = lock(db, ddoc);
        lock.lock();
        try {
            try (MapProgram program = programs.mapProgram(ddoc)) {
                indexer.update(db, ddoc, program, creation, true, null);
            }
            db.subspaces().run((tx, h) -> {
                MapIndexSubspace.setUpdateSeq(tx, h, sig, creation);
                MapIndexSubspace.setBuildStatus(tx, h, sig, MapIndexSubspace.READY);
                return null;
            });
        } finally {
            lock.unlock();
        }
    }

    /** Whether a build of the index runs now: here, or, with the job queue, on any server. */
    boolean running(Database db, DesignDoc ddoc) {
        ReentrantLock l = building.get(jobId(db, ddoc));
        if (l != null && l.isLocked()) return true;
        JobQueue q = jobs;
        return q != null && q.get(JOB_TYPE, jobId(db, ddoc)).map(j -> j.state() == JobQueue.State.RUNNING).orElse(false);
    }

    private ReentrantLock lock(Database db, DesignDoc ddoc) {
        return building.computeIfAbsent(jobId(db, ddoc), k -> new ReentrantLock());
    }

    /** A current index whose trees were not all loaded (a build cut short after its last batch) gets them now. */
    private void completeTrees(Database db, DesignDoc ddoc, Sequence now) {
        if (!indexer.treesMissing(db, ddoc)) return;
        ReentrantLock lock = lock(db, ddoc);
        lock.lock();
        try {
            indexer.ensureTrees(db, ddoc, now);
        } finally {
            lock.unlock();
        }
    }

    /** One build up to {@code target}; {@code progress} hears every committed batch (the job's proof of life). */
    private Sequence build(Database db, DesignDoc ddoc, Sequence target, Runnable progress) {
        Sequence from = currentSeq(db, ddoc);
        if (from != null && from.compareTo(target) >= 0) return from; // built while we waited
        // A first build covers one changes row per document: the counters say how many, no scan needed.
        long total;
        if (from == null) {
            var info = db.info();
            total = info.docCount() + info.docDelCount();
        } else {
            total = indexer.countChanges(db, from, target);
        }
        ActiveTasks.Task task = tasks.start(db.name(), ddoc.id(), total);
        ViewIndexer.Progress p = (n, s) -> {
            task.done(n);
            if (progress != null) progress.run();
        };
        try {
            if (from == null && workers > 1) {
                // A first build of a large database: every worker takes segments of the feed.
                indexer.buildParallel(db, ddoc, () -> programs.mapProgram(ddoc), target, workers, p);
            }
            try (MapProgram program = programs.mapProgram(ddoc)) {
                return indexer.update(db, ddoc, program, target, p);
            }
        } finally {
            tasks.end(task);
        }
    }

    private Sequence buildAsJob(Database db, DesignDoc ddoc, Sequence target) {
        String jobId = jobId(db, ddoc);
        jobs.add(JOB_TYPE, jobId, jobData(db, ddoc));
        JobQueue.Job done = jobs.awaitState(JOB_TYPE, jobId, JobQueue.State.FINISHED, Duration.ofDays(1)).orElseThrow();
        JsonNode err = done.data().get("error");
        if (err != null) {
            String kind = done.data().path("kind").asText("");
            if (kind.equals("storage")) throw new StorageException(StorageException.Kind.valueOf(done.data().path("storage_kind").asText()), done.data().path("reason").asText());
            throw new ViewException(kind.isEmpty() ? ViewException.Kind.COMPILATION_ERROR : ViewException.Kind.valueOf(kind),
                    err.asText(), done.data().path("reason").asText());
        }
        return currentSeq(db, ddoc);
    }

    /** A worker's side of a build job: up to the database's sequence now, which covers every waiter that added the job before. */
    private JsonNode runJob(JobQueue queue, JobQueue.Lease lease) {
        String dbName = lease.data().get("db").asText();
        ObjectNode result = Json.NODES.objectNode();
        try {
            Database db = storage.open(dbName);
            DesignDoc ddoc = designs.get(db, lease.data().get("ddoc").asText());
            if (!ddoc.signature().equals(lease.data().get("sig").asText())) return result.put("superseded", true);
            Sequence target = dbSeq(db);
            if (target == null) return result;
            long[] batches = {0};
            build(db, ddoc, target, () -> {
                if (++batches[0] % 4 == 0) queue.update(lease, lease.data()); // proof of life, a few per second
            });
            return result.put("update_seq", target.toHex());
        } catch (ViewException e) {
            return result.put("error", e.error()).put("reason", e.reason()).put("kind", e.kind().name());
        } catch (StorageException e) {
            return result.put("error", e.error()).put("reason", e.reason()).put("kind", "storage").put("storage_kind", e.kind().name());
        }
    }

    private static String jobId(Database db, DesignDoc ddoc) {
        return db.handle().id() + "/" + ddoc.signature();
    }

    private static ObjectNode jobData(Database db, DesignDoc ddoc) {
        return Json.NODES.objectNode().put("db", db.name()).put("ddoc", ddoc.id()).put("sig", ddoc.signature());
    }

    static Sequence dbSeq(Database db) {
        return db.read(r -> r.updateSeq());
    }

    static Sequence currentSeq(Database db, DesignDoc ddoc) {
        return db.read(r -> MapIndexSubspace.updateSeq(r.tx(), r.handle(), ddoc.signature()));
    }

    /** Stops this server's build workers (jobs they held are taken over after the activity timeout). */
    @Override
    public void close() {
        if (pool != null) pool.close();
    }
}
