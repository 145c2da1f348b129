package dev.chaise.replicator;

import dev.chaise.stats.Counter;
import dev.chaise.views.jobs.JobQueue;

/**
 * CouchDB's {@code couch_replicator.*} metrics (its scheduler, jobs, HTTP client and document
 * processor), counted where this replicator does the same: jobs added to and removed from the
 * queue, runs started, stopped and crashed, checkpoints, requests to remote peers, and the
 * {@code _replicator} watcher's work. The job gauges are read from the scheduler and the queue.
 */
final class ReplicatorMetrics {
    final Counter adds;
    final Counter duplicateAdds;
    final Counter removes;
    final Counter starts;
    final Counter stops;
    final Counter crashes;
    final Counter checkpointsSuccess;
    final Counter checkpointsFailure;
    final Counter requests;
    final Counter responsesSuccess;
    final Counter responsesFailure;
    final Counter streamResponsesSuccess;
    final Counter streamResponsesFailure;
    final Counter workersStarted;
    final Counter changesReadFailures;
    final Counter failedStarts;
    final Counter changesReaderDeaths;
    final Counter workerDeaths;
    final Counter dbsFound;
    final Counter dbsDeleted;
    final Counter dbChanges;
    final Counter failedStateUpdates;
    final Counter completedStateUpdates;

    ReplicatorMetrics(dev.chaise.stats.Stats s) {
        adds = s.counter("couch_replicator.jobs.adds", "number of replication jobs added");
        duplicateAdds = s.counter("couch_replicator.jobs.duplicate_adds", "number of replication jobs added again while already queued");
        removes = s.counter("couch_replicator.jobs.removes", "number of replication jobs removed");
        starts = s.counter("couch_replicator.jobs.starts", "number of replication job runs started");
        stops = s.counter("couch_replicator.jobs.stops", "number of replication job runs stopped (cancelled, removed, or the server stopping)");
        crashes = s.counter("couch_replicator.jobs.crashes", "number of replication job runs that crashed");
        checkpointsSuccess = s.counter("couch_replicator.checkpoints.success", "number of checkpoints recorded");
        checkpointsFailure = s.counter("couch_replicator.checkpoints.failure", "number of checkpoints that failed");
        requests = s.counter("couch_replicator.requests", "number of HTTP requests sent to remote peers");
        responsesSuccess = s.counter("couch_replicator.responses.success", "number of HTTP responses from remote peers under 500");
        responsesFailure = s.counter("couch_replicator.responses.failure", "number of HTTP responses from remote peers with 408 or 5xx");
        streamResponsesSuccess = s.counter("couch_replicator.stream_responses.success", "number of streamed HTTP responses (changes feeds, multipart documents) received");
        streamResponsesFailure = s.counter("couch_replicator.stream_responses.failure", "number of streamed HTTP responses with 408 or 5xx, or broken");
        workersStarted = s.counter("couch_replicator.workers_started", "number of replication workers started");
        changesReadFailures = s.counter("couch_replicator.changes_read_failures", "number of failed reads of a source's changes");
        failedStarts = s.counter("couch_replicator.failed_starts", "number of replications that failed to start (a database missing or unreachable)");
        changesReaderDeaths = s.counter("couch_replicator.changes_reader_deaths", "number of replications whose changes reader failed");
        workerDeaths = s.counter("couch_replicator.worker_deaths", "number of replication workers that failed");
        dbsFound = s.counter("couch_replicator.docs.dbs_found", "number of times the _replicator database was found");
        dbsDeleted = s.counter("couch_replicator.docs.dbs_deleted", "number of times the _replicator database was found deleted");
        dbChanges = s.counter("couch_replicator.docs.db_changes", "number of _replicator document changes processed");
        failedStateUpdates = s.counter("couch_replicator.docs.failed_state_updates", "number of _replicator documents marked failed");
        completedStateUpdates = s.counter("couch_replicator.docs.completed_state_updates", "number of _replicator documents marked completed");
    }

    /** The job gauges: jobs this server runs now (and those crashing), and the queue's pending and unfinished jobs. */
    void gauges(dev.chaise.stats.Stats s, Scheduler scheduler, JobQueue queue) {
        s.gauge("couch_replicator.jobs.running", "replication jobs this server runs", () -> scheduler.runners().size());
        s.gauge("couch_replicator.jobs.crashed", "replication jobs this server holds that crashed and wait to run again",
                () -> scheduler.runners().stream().filter(r -> r.state.equals("crashing")).count());
        s.gauge("couch_replicator.jobs.pending", "replication jobs waiting for a server to run them",
                () -> queue.list(JobData.TYPE).stream().filter(j -> j.state() == JobQueue.State.PENDING).count());
        s.gauge("couch_replicator.jobs.total", "replication jobs not finished",
                () -> queue.list(JobData.TYPE).stream().filter(j -> j.state() != JobQueue.State.FINISHED).count());
    }
}
