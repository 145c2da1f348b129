package dev.chaise.views.jobs;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Platform threads that take jobs of one type from a {@link JobQueue} and run them, plus the
 * type's activity monitor. A handler reports progress through {@link JobQueue#update} (which also
 * proves it alive); it returns the job's result, or throws, which finishes the job with an
 * {@code error} result. At start it takes back the orphans of its type ({@link
 * JobQueue#requeueOrphans}): jobs a crash left running are queued again at once, not after the
 * activity timeout. On {@link #close} the threads are interrupted and every job still held is
 * given back ({@link JobQueue#release}): pending at once for another server, not after the
 * activity timeout.
 */
public final class JobWorkerPool implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(JobWorkerPool.class);

    @FunctionalInterface
    public interface Handler {
        JsonNode run(JobQueue queue, JobQueue.Lease lease) throws Exception;
    }

    private static final long FIRST_BACKOFF_MS = 100;
    private static final long MAX_BACKOFF_MS = 5_000;
    private final List<Thread> threads = new ArrayList<>();
    private final java.util.Set<JobQueue.Lease> held = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final JobQueue queue;
    private volatile boolean closed;

    /** @param activityTimeout how long a running job may go without an update before it is taken over */
    public JobWorkerPool(JobQueue queue, String type, int workers, Duration activityTimeout, Handler handler) {
        this.queue = queue;
        int orphans = queue.requeueOrphans(type);
        if (orphans > 0) log.info("re-queued {} {} job(s) left running by a previous process", orphans, type);
        for (int i = 0; i < workers; i++) {
            threads.add(Thread.ofPlatform().name("jobs-" + type + "-" + i).daemon().start(() -> work(queue, type, handler)));
        }
        threads.add(Thread.ofPlatform().name("jobs-" + type + "-monitor").daemon().start(() -> monitor(queue, type, activityTimeout)));
    }

    private void work(JobQueue queue, String type, Handler handler) {
        long backoffMs = FIRST_BACKOFF_MS;
        while (!closed) {
            JobQueue.Lease lease;
            try {
                lease = queue.accept(type, Duration.ofSeconds(1)).orElse(null);
            } catch (RuntimeException e) {
                if (closed) return;
                // A store that fails fails at once: without a pause this loop would spin and flood the log.
                log.warn("taking a {} job failed; trying again in {} ms", type, backoffMs, e);
                try {
                    Thread.sleep(backoffMs);
                } catch (InterruptedException stop) {
                    return;
                }
                backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
                continue;
            }
            backoffMs = FIRST_BACKOFF_MS;
            if (lease == null) continue;
            held.add(lease);
            try {
                JsonNode result = handler.run(queue, lease);
                queue.finish(lease, result == null ? Json.NODES.objectNode() : result);
            } catch (LeaseLostException e) {
                log.info("{}", e.getMessage());
            } catch (Exception e) {
                if (closed) { // interrupted on close: the job goes back to the queue
                    release(lease);
                    return;
                }
                log.warn("{} job {} failed", type, lease.jobId(), e);
                try {
                    queue.finish(lease, Json.NODES.objectNode().put("error", String.valueOf(e.getMessage())));
                } catch (RuntimeException lost) {
                    log.info("could not record the failure of {} job {}", type, lease.jobId(), lost);
                }
            } finally {
                held.remove(lease);
            }
        }
    }

    private void release(JobQueue.Lease lease) {
        if (!held.remove(lease)) return;
        try {
            queue.release(lease);
            log.info("gave {} job {} back to the queue", lease.type(), lease.jobId());
        } catch (RuntimeException e) {
            log.info("could not give {} job {} back; it is taken over after the activity timeout", lease.type(), lease.jobId(), e);
        }
    }

    private void monitor(JobQueue queue, String type, Duration timeout) {
        var seen = new HashMap<String, com.apple.foundationdb.tuple.Versionstamp>();
        while (!closed) {
            try {
                Thread.sleep(timeout.toMillis());
                int n = queue.requeueStale(type, seen);
                if (n > 0) log.info("re-queued {} {} job(s) whose worker went quiet", n, type);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                log.warn("the {} activity monitor failed a pass", type, e);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        threads.forEach(Thread::interrupt);
        for (Thread t : threads) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        // A worker still busy (a build that ignores interrupts) loses its lease now; its next update fails cleanly.
        for (JobQueue.Lease l : List.copyOf(held)) release(l);
    }
}
