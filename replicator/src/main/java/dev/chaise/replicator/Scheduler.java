package dev.chaise.replicator;

import dev.chaise.views.jobs.JobQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns which replication jobs this server runs: an acceptor takes pending jobs of the KV queue
 * up to {@link ReplicatorConfig#maxJobs} and gives each a {@link JobRunner} on a virtual thread;
 * an activity monitor re-queues jobs whose lease went stale (a dead server's), and a start takes
 * back at once the jobs a crash of this node left running ({@link JobQueue#requeueOrphans}).
 * Several servers on one FoundationDB cluster share the queue, so a job runs on exactly one.
 */
final class Scheduler implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Scheduler.class);
    private final ReplicatorConfig config;
    private final JobQueue queue;
    private final Peers peers;
    private final JobRunner.Completed completed;
    private final Map<String, JobRunner> running = new ConcurrentHashMap<>();
    private final AtomicInteger slots;
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean closed;

    private final ReplicatorMetrics metrics;

    Scheduler(ReplicatorConfig config, JobQueue queue, Peers peers, JobRunner.Completed completed, ReplicatorMetrics metrics) {
        this.config = config;
        this.metrics = metrics;
        this.queue = queue;
        this.peers = peers;
        this.completed = completed;
        this.slots = new AtomicInteger(config.maxJobs());
    }

    /** Starts taking jobs and the activity monitor. */
    void start() {
        // Jobs a crash of this node left running go back to the queue now, not after the activity timeout.
        int orphans = queue.requeueOrphans(JobData.TYPE);
        if (orphans > 0) log.info("re-queued {} replication job(s) left running by a previous process", orphans);
        threads.add(Thread.ofVirtual().name("replicator-acceptor").start(this::acceptLoop));
        threads.add(Thread.ofVirtual().name("replicator-monitor").start(this::monitorLoop));
    }

    /** The runner of a job this server holds, if any. */
    Optional<JobRunner> runner(String id) {
        return Optional.ofNullable(running.get(id));
    }

    /** The runners of the jobs this server holds now. */
    Collection<JobRunner> runners() {
        return running.values();
    }

    /** Removes a job from the queue; its runner stops at once here, or at its next heartbeat on another server. */
    void removeJob(String id) {
        queue.remove(JobData.TYPE, id);
        metrics.removes.increment();
        JobRunner r = running.get(id);
        if (r != null) r.stop();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                if (slots.get() <= 0) {
                    Thread.sleep(1000);
                    continue;
                }
                Optional<JobQueue.Lease> lease = queue.accept(JobData.TYPE, Duration.ofSeconds(30));
                if (lease.isEmpty()) continue;
                slots.decrementAndGet();
                JobRunner r = new JobRunner(lease.get(), config, queue, peers, completed, () -> closed, metrics);
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
                int n = queue.requeueStale(JobData.TYPE, seen);
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

    /** Stops taking jobs; runs stop with a last checkpoint and give their jobs back (waits up to 5 s for each). */
    @Override
    public void close() {
        closed = true;
        threads.forEach(Thread::interrupt);
        for (JobRunner r : running.values()) r.stop();
        for (JobRunner r : running.values()) {
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
    }
}
