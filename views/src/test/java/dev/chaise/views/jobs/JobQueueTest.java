package dev.chaise.views.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.tuple.Versionstamp;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.kv.embedded.FaultInjection;
import dev.chaise.storage.json.Json;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class JobQueueTest {

    static KvStore store(FaultInjection f) {
        return EmbeddedKvStore.open(EmbeddedOptions.inMemory().withFaults(f));
    }

    @Test
    void eachJobIsTakenOnceByManyWorkers() throws Exception {
        try (KvStore kv = store(FaultInjection.NONE)) {
            exactlyOnce(new JobQueue(kv), 200, 6);
        }
    }

    /** 1020 and 1007 make takers retry; a 1021 that committed must not hand a job out twice. */
    @Test
    void eachJobIsTakenOnceUnderFaults() throws Exception {
        try (KvStore kv = store(new FaultInjection(0.1, 0.02, 0.1, 0.5, 9))) {
            exactlyOnce(new JobQueue(kv), 120, 4);
        }
    }

    private static void exactlyOnce(JobQueue q, int jobs, int workers) throws Exception {
        for (int i = 0; i < jobs; i++) q.add("t", "j" + i, Json.NODES.objectNode().put("n", i));
        Map<String, AtomicInteger> taken = new ConcurrentHashMap<>();
        List<Thread> ts = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            ts.add(Thread.ofPlatform().start(() -> {
                Optional<JobQueue.Lease> l;
                while ((l = q.accept("t", Duration.ofMillis(200))).isPresent()) {
                    taken.computeIfAbsent(l.get().jobId(), k -> new AtomicInteger()).incrementAndGet();
                    q.finish(l.get(), Json.NODES.objectNode().put("done", true));
                }
            }));
        }
        for (Thread t : ts) t.join();
        assertEquals(jobs, taken.size(), "every job taken");
        taken.forEach((id, n) -> assertEquals(1, n.get(), id + " taken once"));
        for (JobQueue.Job j : q.list("t")) assertEquals(JobQueue.State.FINISHED, j.state());
    }

    @Test
    void addIsIdempotentAndReAddsRunAgain() {
        try (KvStore kv = store(FaultInjection.NONE)) {
            JobQueue q = new JobQueue(kv);
            q.add("t", "a", Json.NODES.objectNode().put("v", 1));
            q.add("t", "a", Json.NODES.objectNode().put("v", 2)); // pending: new data, one queue entry
            JobQueue.Lease l = q.accept("t", Duration.ZERO).orElseThrow();
            assertEquals(2, l.data().get("v").asInt());
            assertTrue(q.accept("t", Duration.ZERO).isEmpty(), "queued once");
            q.add("t", "a", Json.NODES.objectNode().put("v", 3)); // running: runs again after it finishes
            q.finish(l, Json.NODES.objectNode());
            assertEquals(JobQueue.State.PENDING, q.get("t", "a").orElseThrow().state());
            JobQueue.Lease again = q.accept("t", Duration.ZERO).orElseThrow();
            q.finish(again, Json.NODES.objectNode().put("r", 1));
            assertEquals(JobQueue.State.FINISHED, q.get("t", "a").orElseThrow().state());
            q.add("t", "a", Json.NODES.objectNode()); // finished: queued again
            assertTrue(q.accept("t", Duration.ZERO).isPresent());
        }
    }

    @Test
    void aQuietWorkerLosesItsJob() {
        try (KvStore kv = store(FaultInjection.NONE)) {
            JobQueue q = new JobQueue(kv);
            q.add("t", "a", Json.NODES.objectNode());
            JobQueue.Lease first = q.accept("t", Duration.ZERO).orElseThrow();
            Map<String, Versionstamp> seen = new HashMap<>();
            assertEquals(0, q.requeueStale("t", seen), "first pass only remembers");
            q.update(first, Json.NODES.objectNode().put("progress", 1)); // alive
            assertEquals(0, q.requeueStale("t", seen), "activity moved: not stale");
            assertEquals(1, q.requeueStale("t", seen), "no update over a whole pass: taken over");
            JobQueue.Lease second = q.accept("t", Duration.ZERO).orElseThrow();
            assertEquals("a", second.jobId());
            assertThrows(LeaseLostException.class, () -> q.update(first, Json.NODES.objectNode()));
            assertThrows(LeaseLostException.class, () -> q.finish(first, Json.NODES.objectNode()));
            q.finish(second, Json.NODES.objectNode());
        }
    }

    @Test
    void aStoppingPoolGivesItsJobsBackAtOnce() throws Exception {
        try (KvStore kv = store(FaultInjection.NONE)) {
            JobQueue q = new JobQueue(kv);
            CountDownLatch running = new CountDownLatch(1);
            // One job that would run for an hour, and one whose handler ignores interrupts for a while.
            JobWorkerPool pool = new JobWorkerPool(q, "s", 1, Duration.ofHours(1), (queue, lease) -> {
                running.countDown();
                Thread.sleep(3_600_000);
                return Json.NODES.objectNode();
            });
            q.add("s", "long", Json.NODES.objectNode().put("n", 1));
            running.await();
            assertEquals(JobQueue.State.RUNNING, q.get("s", "long").orElseThrow().state());
            pool.close();
            assertEquals(JobQueue.State.PENDING, q.get("s", "long").orElseThrow().state(), "pending again, not waiting an hour for the monitor");
            JobQueue.Lease next = q.accept("s", Duration.ZERO).orElseThrow(); // another server's worker takes it now
            assertEquals(1, next.data().get("n").asInt(), "with its data");
            q.finish(next, Json.NODES.objectNode());

            q.add("s", "x", Json.NODES.objectNode());
            JobQueue.Lease held = q.accept("s", Duration.ZERO).orElseThrow();
            q.release(held);
            assertThrows(LeaseLostException.class, () -> q.update(q.get("s", "x").map(j -> new JobQueue.Lease("s", "x", "stale", j.data())).orElseThrow(), Json.NODES.objectNode()));
            q.release(held); // a second release of a lost lease changes nothing
            assertEquals(JobQueue.State.PENDING, q.get("s", "x").orElseThrow().state());
        }
    }

    @Test
    void waitersWakeOnWatches() throws Exception {
        try (KvStore kv = store(FaultInjection.NONE)) {
            JobQueue q = new JobQueue(kv);
            CountDownLatch waiting = new CountDownLatch(1);
            var acceptor = new java.util.concurrent.CompletableFuture<Optional<JobQueue.Lease>>();
            Thread.ofPlatform().start(() -> {
                waiting.countDown();
                acceptor.complete(q.accept("t", Duration.ofMinutes(1)));
            });
            waiting.await();
            q.add("t", "late", Json.NODES.objectNode());
            JobQueue.Lease l = acceptor.get().orElseThrow(); // returns because the add woke it, long before a minute
            var awaiting = new java.util.concurrent.CompletableFuture<Optional<JobQueue.Job>>();
            Thread.ofPlatform().start(() -> awaiting.complete(q.awaitState("t", "late", JobQueue.State.FINISHED, Duration.ofMinutes(1))));
            q.finish(l, Json.NODES.objectNode().put("ok", true));
            assertTrue(awaiting.get().orElseThrow().data().get("ok").asBoolean());
            assertTrue(q.awaitState("t", "nope", JobQueue.State.FINISHED, Duration.ofMillis(50)).isEmpty());
        }
    }

    /**
     * The lost wakeup of issue 15: the job finishes after awaitState read it running and while the
     * watch on its record is being armed. The engine's WATCH_ARM hook forces that moment.
     */
    @Test
    void aJobFinishingWhileItsWaiterArmsTheWatchWakesTheWaiter() throws Exception {
        java.util.concurrent.atomic.AtomicReference<Runnable> atArm = new java.util.concurrent.atomic.AtomicReference<>();
        try (KvStore kv = store(FaultInjection.hooked(p -> {
            if (p != FaultInjection.Point.WATCH_ARM) return;
            Runnable r = atArm.getAndSet(null);
            if (r != null) r.run();
        }))) {
            JobQueue q = new JobQueue(kv);
            q.add("t", "j", Json.NODES.objectNode());
            JobQueue.Lease lease = q.accept("t", Duration.ZERO).orElseThrow();
            atArm.set(() -> {
                Thread finisher = Thread.ofPlatform().start(() -> q.finish(lease, Json.NODES.objectNode().put("ok", true)));
                try {
                    finisher.join(10_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            // A woken waiter returns at once; one that missed the change waits its whole timeout, then re-reads.
            Duration timeout = Duration.ofSeconds(20);
            long start = System.nanoTime();
            Optional<JobQueue.Job> done = q.awaitState("t", "j", JobQueue.State.FINISHED, timeout);
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            assertTrue(atArm.get() == null, "the job finished while the waiter armed its watch");
            assertTrue(done.isPresent() && done.get().data().get("ok").asBoolean());
            assertTrue(waited.compareTo(timeout.dividedBy(2)) < 0, "the waiter was woken, not timed out: it waited " + waited);
        }
    }

    /**
     * kill -9 leaves a job running with nobody working on it. The embedded engine has one process,
     * so at the next open every running job is an orphan: the pool takes it again at once, where it
     * used to wait for the activity timeout (an hour here, a minute in the server).
     */
    @Test
    void aJobLeftRunningByACrashedProcessIsTakenAgainAtOnce(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            JobQueue q = new JobQueue(kv);
            q.add("t", "crashed", Json.NODES.objectNode().put("n", 1));
            q.add("t", "waiting", Json.NODES.objectNode().put("n", 2));
            q.accept("t", Duration.ZERO).orElseThrow(); // the process dies while running it
        }
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            JobQueue q = new JobQueue(kv);
            assertEquals(JobQueue.State.RUNNING, q.get("t", "crashed").orElseThrow().state(), "left running by the dead process");
            AtomicInteger runs = new AtomicInteger();
            try (JobWorkerPool pool = new JobWorkerPool(q, "t", 1, Duration.ofHours(1), (queue, lease) -> {
                runs.incrementAndGet();
                return Json.NODES.objectNode().put("done", lease.data().get("n").asInt());
            })) {
                for (String id : List.of("crashed", "waiting")) {
                    Optional<JobQueue.Job> j = q.awaitState("t", id, JobQueue.State.FINISHED, Duration.ofSeconds(30));
                    assertTrue(j.isPresent(), id + " finished without waiting for the hour-long activity timeout");
                }
            }
            assertEquals(2, runs.get());
        }
    }

    /** On a shared cluster only the restarted node's own jobs are orphans; another node's are alive. */
    @Test
    void onASharedStoreARestartedNodeTakesBackOnlyItsOwnJobs() {
        try (KvStore embedded = store(FaultInjection.NONE)) {
            KvStore shared = new KvStore() { // the embedded engine, claiming to be shared as a cluster is
                public dev.chaise.kv.Transaction createTransaction() {
                    return embedded.createTransaction();
                }

                public dev.chaise.kv.StoreTimer timer() {
                    return embedded.timer();
                }

                public String backendName() {
                    return "shared";
                }

                public void close() {}
            };
            JobQueue a = new JobQueue(shared, "node-a");
            JobQueue b = new JobQueue(shared, "node-b");
            a.add("t", "j1", Json.NODES.objectNode());
            a.add("t", "j2", Json.NODES.objectNode());
            String heldByA = a.accept("t", Duration.ZERO).orElseThrow().jobId();
            String heldByB = b.accept("t", Duration.ZERO).orElseThrow().jobId();
            assertEquals("node-a", a.get("t", heldByA).orElseThrow().node());
            JobQueue restartedA = new JobQueue(shared, "node-a");
            assertEquals(1, restartedA.requeueOrphans("t"));
            assertEquals(JobQueue.State.PENDING, a.get("t", heldByA).orElseThrow().state());
            assertEquals(JobQueue.State.RUNNING, a.get("t", heldByB).orElseThrow().state(), "node-b is alive: its job is its own");
            assertEquals(heldByA, restartedA.accept("t", Duration.ZERO).orElseThrow().jobId());
        }
    }

    @Test
    void aPoolRunsEveryJobAndReportsFailures() throws Exception {
        try (KvStore kv = store(FaultInjection.NONE)) {
            JobQueue q = new JobQueue(kv);
            AtomicInteger runs = new AtomicInteger();
            JobWorkerPool pool = new JobWorkerPool(q, "p", 3, Duration.ofSeconds(30), (queue, lease) -> {
                runs.incrementAndGet();
                queue.update(lease, Json.NODES.objectNode().put("half", true));
                if (lease.data().get("n").asInt() == 7) throw new IllegalStateException("seven");
                return Json.NODES.objectNode().put("twice", lease.data().get("n").asInt() * 2);
            });
            try {
                for (int i = 0; i < 20; i++) q.add("p", "j" + i, Json.NODES.objectNode().put("n", i));
                for (int i = 0; i < 20; i++) {
                    JobQueue.Job j = q.awaitState("p", "j" + i, JobQueue.State.FINISHED, Duration.ofMinutes(1)).orElseThrow();
                    if (i == 7) assertEquals("seven", j.data().get("error").asText());
                    else assertEquals(2 * i, j.data().get("twice").asInt());
                }
            } finally {
                pool.close();
            }
            assertEquals(20, runs.get());
        }
    }

    /** Several servers submitting the same job: it is queued and run once; once finished it may be queued again. */
    @Test
    void addIfAbsentQueuesOnceUntilFinished() throws Exception {
        try (KvStore kv = store(new FaultInjection(0.1, 0.02, 0.1, 0.5, 5))) {
            JobQueue q = new JobQueue(kv);
            assertTrue(q.addIfAbsent("r", "job", Json.NODES.objectNode().put("v", 1)));
            assertEquals(false, q.addIfAbsent("r", "job", Json.NODES.objectNode().put("v", 2)), "pending: left alone");
            JobQueue.Lease l = q.accept("r", Duration.ofSeconds(1)).orElseThrow();
            assertEquals(1, l.data().get("v").asInt(), "the first submission's data");
            assertEquals(false, q.addIfAbsent("r", "job", Json.NODES.objectNode().put("v", 3)), "running: left alone");
            q.finish(l, Json.NODES.objectNode());
            assertEquals(JobQueue.State.FINISHED, q.get("r", "job").orElseThrow().state(), "no second run was asked for");
            assertTrue(q.accept("r", Duration.ofMillis(100)).isEmpty(), "nothing else queued");
            assertTrue(q.addIfAbsent("r", "job", Json.NODES.objectNode().put("v", 4)), "finished: queued again");
            assertEquals(4, q.accept("r", Duration.ofSeconds(1)).orElseThrow().data().get("v").asInt());
        }
    }
}
