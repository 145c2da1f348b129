package dev.chaise.views;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** Index builds running in this process, as {@code _active_tasks} shows them. */
public final class ActiveTasks {

    /** One build; {@code changesDone} moves as batches commit. */
    public static final class Task {
        final String db;
        final String ddoc;
        final long totalChanges;
        final long startedOn = System.currentTimeMillis() / 1000;
        final AtomicLong changesDone = new AtomicLong();
        volatile long updatedOn = startedOn;

        Task(String db, String ddoc, long totalChanges) {
            this.db = db;
            this.ddoc = ddoc;
            this.totalChanges = totalChanges;
        }

        void done(int n) {
            changesDone.addAndGet(n);
            updatedOn = System.currentTimeMillis() / 1000;
        }
    }

    /** A snapshot of one task, in CouchDB's {@code indexer} shape. */
    public record Info(String database, String designDocument, long changesDone, long totalChanges, int progress, long startedOn, long updatedOn) {}

    private final ConcurrentHashMap<Task, Boolean> tasks = new ConcurrentHashMap<>();

    Task start(String db, String ddoc, long totalChanges) {
        Task t = new Task(db, ddoc, totalChanges);
        tasks.put(t, true);
        return t;
    }

    void end(Task t) {
        tasks.remove(t);
    }

    public List<Info> list() {
        return tasks.keySet().stream().map(t -> {
            long done = Math.min(t.changesDone.get(), t.totalChanges);
            int progress = t.totalChanges == 0 ? 100 : (int) (done * 100 / t.totalChanges);
            return new Info(t.db, t.ddoc, done, t.totalChanges, progress, t.startedOn, t.updatedOn);
        }).toList();
    }
}
