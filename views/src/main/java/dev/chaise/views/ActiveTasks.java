package dev.chaise.views;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** Owns the record of index builds in this process: those running, as {@code _active_tasks} shows them, and totals since start for the metrics. */
public final class ActiveTasks {

    /** One build; {@code changesDone} moves as batches commit. */
    public static final class Task {
        final String db;
        final String ddoc;
        final long totalChanges;
        final long startedOn = System.currentTimeMillis() / 1000;
        final AtomicLong changesDone = new AtomicLong();
        final java.util.concurrent.atomic.LongAdder indexed;
        volatile long updatedOn = startedOn;

        Task(String db, String ddoc, long totalChanges, java.util.concurrent.atomic.LongAdder indexed) {
            this.indexed = indexed;
            this.db = db;
            this.ddoc = ddoc;
            this.totalChanges = totalChanges;
        }

        void done(int n) {
            changesDone.addAndGet(n);
            indexed.add(n);
            updatedOn = System.currentTimeMillis() / 1000;
        }
    }

    /** A snapshot of one task, in CouchDB's {@code indexer} shape. */
    public record Info(String database, String designDocument, long changesDone, long totalChanges, int progress, long startedOn, long updatedOn) {}

    private final ConcurrentHashMap<Task, Boolean> tasks = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.LongAdder indexed = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder started = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder finished = new java.util.concurrent.atomic.LongAdder();

    /** Builds since start, for the metrics: started, finished (either way), and changes indexed. */
    public record Totals(long started, long finished, long changesIndexed) {}

    Task start(String db, String ddoc, long totalChanges) {
        Task t = new Task(db, ddoc, totalChanges, indexed);
        tasks.put(t, true);
        started.increment();
        return t;
    }

    void end(Task t) {
        tasks.remove(t);
        finished.increment();
    }

    public Totals totals() {
        return new Totals(started.sum(), finished.sum(), indexed.sum());
    }

    public List<Info> list() {
        return tasks.keySet().stream().map(t -> {
            long done = Math.min(t.changesDone.get(), t.totalChanges);
            int progress = t.totalChanges == 0 ? 100 : (int) (done * 100 / t.totalChanges);
            return new Info(t.db, t.ddoc, done, t.totalChanges, progress, t.startedOn, t.updatedOn);
        }).toList();
    }
}
