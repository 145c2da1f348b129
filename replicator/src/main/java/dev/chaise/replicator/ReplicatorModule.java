package dev.chaise.replicator;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.Storage;
import dev.chaise.views.DocFilters;
import dev.chaise.views.jobs.JobQueue;
import java.util.function.Predicate;

/**
 * Owns wiring the replicator for one server: makes each part once, hands each to whoever needs
 * that job done ({@link ReplicateRequests} for {@code _replicate}, {@link SchedulerPages} for
 * {@code _scheduler}, {@link ReplicationTasks} for {@code _active_tasks}), starts the scheduler
 * and the {@code _replicator} watcher, and stops them. It does none of the work.
 *
 * <p>A replication is a job of the KV job queue that builds views (type {@value JobData#TYPE}, id
 * the replication id): whichever server takes it runs it ({@link Scheduler}, {@link JobRunner}).
 * Jobs from {@code _replicate} are transient; jobs from {@code _replicator} documents
 * ({@link ReplicatorDocs}) are retried until their document is deleted.
 */
public final class ReplicatorModule implements AutoCloseable {
    private final Peers peers;
    private final Scheduler scheduler;
    private final ReplicatorDocs docs;
    private final ReplicateRequests requests;
    private final SchedulerPages pages;
    private final ReplicationTasks tasks;
    private Thread docsWatcher;

    /**
     * @param filters design documents' filters, for local sources
     * @param serverAdmin whether a user name is a server admin's ({@code _replicator} documents they own run as server admins)
     */
    public ReplicatorModule(Storage storage, DocFilters filters, JobQueue queue, LocalAccess access, ReplicatorConfig config,
                            Predicate<String> serverAdmin) {
        ReplicatorMetrics metrics = new ReplicatorMetrics(storage.stats());
        this.peers = new Peers(access, filters, config, metrics);
        ReplicationIds ids = new ReplicationIds(config.serverUuid(), peers);
        // The scheduler and the watcher need each other: a document's one-shot job records its
        // completion in the document, and the watcher stops the jobs of deleted documents.
        this.scheduler = new Scheduler(config, queue, peers, this::documentCompleted, metrics);
        this.docs = new ReplicatorDocs(storage, config, queue, ids, scheduler, serverAdmin, metrics);
        this.requests = new ReplicateRequests(config, queue, ids, scheduler, metrics);
        metrics.gauges(storage.stats(), scheduler, queue);
        this.pages = new SchedulerPages(config, queue, scheduler, docs);
        this.tasks = new ReplicationTasks(config, scheduler);
    }

    private void documentCompleted(String database, String docId, String repId, ObjectNode info, String startTime) {
        docs.completed(database, docId, repId, info, startTime);
    }

    /** Starts taking jobs, the activity monitor and the {@code _replicator} watcher. */
    public ReplicatorModule start() {
        scheduler.start();
        docsWatcher = Thread.ofVirtual().name("replicator-docs").start(docs::run);
        return this;
    }

    public ReplicateRequests requests() {
        return requests;
    }

    public SchedulerPages pages() {
        return pages;
    }

    public ReplicationTasks tasks() {
        return tasks;
    }

    /** Runs stop with a last checkpoint and give their jobs back; remote connections close. */
    @Override
    public void close() {
        if (docsWatcher != null) docsWatcher.interrupt();
        scheduler.close();
        peers.close();
    }
}
