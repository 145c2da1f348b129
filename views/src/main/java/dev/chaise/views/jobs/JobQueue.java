package dev.chaise.views.jobs;

import static dev.chaise.storage.KeySpace.Jobs.JOB;
import static dev.chaise.storage.KeySpace.Jobs.NOTIFY;
import static dev.chaise.storage.KeySpace.Jobs.PENDING;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.StoreTimer;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.Versionstamps;
import dev.chaise.storage.KeySpace;
import dev.chaise.storage.json.Json;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A job queue in the KV store, modelled on CouchDB's couch_jobs: several servers sharing one FDB
 * cluster take jobs from it safely, and a job whose worker died is taken over.
 *
 * <pre>
 * (2, Type)
 * ├── 0 PENDING, Versionstamp, JobId = ""                        oldest first; taking one clears it
 * ├── 1 JOB, JobId = (State, DataJson, LeaseId, Activity, Again, Node)
 * │                                                              State: "pending" | "running" | "finished"
 * │                                                              Activity: versionstamp of the last update
 * │                                                              Node: the server holding the lease
 * └── 2 NOTIFY = int64 LE                                        bumped by every add: idle workers watch it
 * </pre>
 *
 * Taking a job reads the first pending key with a conflict range, so two workers never both get
 * it. A running job proves it is alive by {@link #update}, which rewrites its Activity versionstamp;
 * the activity monitor of any server re-reads running jobs and re-queues one whose Activity has not
 * changed over a whole activity timeout, measured on its own clock, so no two servers need agreeing
 * clocks (couch_jobs' scheme). The old worker's next update then fails with {@link LeaseLostException}.
 *
 * <p>A crashed server's jobs need not wait for that timeout: {@link #requeueOrphans}, called as a
 * node's workers start, re-queues at once every running job that cannot have a live worker. On a
 * store with one process (the embedded engine) that is every running job; on a shared cluster,
 * those held under this node's name, which a restarted server takes back.
 */
public final class JobQueue {

    public enum State { PENDING, RUNNING, FINISHED }

    /** A job as stored; {@code node} holds the lease of a running job. */
    public record Job(String type, String id, State state, JsonNode data, String leaseId, String node) {}

    /** The right to run one job, held by the worker that accepted it. */
    public record Lease(String type, String jobId, String leaseId, JsonNode data) {}

    private final KvStore kv;
    private final byte[] root;
    private final String node;

    /** A queue for a store with one process, where the node's name does not matter. */
    public JobQueue(KvStore kv) {
        this(kv, "local");
    }

    /** @param node this server's name: on a shared cluster, unique among the servers and kept across restarts */
    public JobQueue(KvStore kv, String node) {
        this.kv = kv;
        this.root = KeySpace.jobsPrefix();
        this.node = node;
    }

    private byte[] key(String type, Object... items) {
        Tuple t = Tuple.from(type);
        for (Object o : items) t = t.addObject(o);
        return Keys.concat(root, t.pack());
    }

    private Tuple unpack(byte[] k) {
        return Tuple.fromBytes(k, root.length, k.length - root.length);
    }

    private record Record(State state, String data, String leaseId, Versionstamp activity, boolean again, String node) {
        Job job(String type, String id) {
            return new Job(type, id, state, parse(data), leaseId, node);
        }
    }

    private Record read(ReadTransaction tx, String type, String jobId) {
        byte[] v = tx.get(key(type, JOB, jobId));
        return v == null ? null : decode(v);
    }

    private static Record decode(byte[] v) {
        Tuple t = Tuple.fromBytes(v);
        return new Record(State.valueOf(t.getString(0)), t.getString(1), t.getString(2),
                t.get(3) == null ? null : t.getVersionstamp(3), t.getBoolean(4), t.size() > 5 ? t.getString(5) : null);
    }

    /**
     * Writes a job record; with {@code touch} its Activity becomes this transaction's versionstamp.
     * A running job is held by this node.
     */
    private void write(Transaction tx, String type, String jobId, State state, String data, String leaseId, boolean touch, boolean again) {
        byte[] k = key(type, JOB, jobId);
        String holder = state == State.RUNNING ? node : null;
        if (touch) {
            tx.setVersionstampedValue(k, Versionstamps.packWithVersionstamp(new byte[0],
                    Tuple.from(state.name(), data, leaseId, Versionstamp.incomplete(0), again, holder)));
        } else {
            tx.set(k, Tuple.from(state.name(), data, leaseId, null, again, holder).pack());
        }
    }

    private void enqueue(Transaction tx, String type, String jobId) {
        tx.setVersionstampedKey(Versionstamps.packWithVersionstamp(root, Tuple.from(type, PENDING, Versionstamp.incomplete(0), jobId)), new byte[0]);
        tx.mutate(MutationType.ADD, key(type, NOTIFY), littleEndian(1));
    }

    private void dequeue(Transaction tx, String type, String jobId) {
        byte[][] r = range(type, PENDING);
        for (KeyValue kv : tx.getRangeAsList(r[0], r[1], 0, false)) {
            if (unpack(kv.key()).getString(3).equals(jobId)) tx.clear(kv.key());
        }
    }

    private byte[][] range(String type, long sub) {
        byte[] p = key(type, sub);
        return new byte[][] {Keys.concat(p, new byte[] {0x00}), Keys.concat(p, new byte[] {(byte) 0xff})};
    }

    /**
     * Submits a job. A new or finished job is queued; a pending one gets the new data and keeps its
     * place; a running one keeps running and runs once more after it finishes.
     */
    public void add(String type, String jobId, JsonNode data) {
        String json = data.toString();
        kv.run(tx -> {
            Record r = read(tx, type, jobId);
            if (r == null || r.state == State.FINISHED) {
                write(tx, type, jobId, State.PENDING, json, null, false, false);
                enqueue(tx, type, jobId);
            } else if (r.state == State.PENDING) {
                write(tx, type, jobId, State.PENDING, json, null, false, false);
            } else {
                tx.set(key(type, JOB, jobId), Tuple.from(r.state.name(), r.data, r.leaseId, r.activity, true, r.node).pack());
            }
            return Boolean.TRUE;
        }, tx -> Optional.empty()); // after a 1021, adding again finds the job pending or running: no second queue entry
    }

    /**
     * Submits a job unless one with this id is pending or running (a finished one is queued
     * again). For submitters that several servers run at once, such as the replicator's
     * {@code _replicator} watcher: the second server's add changes nothing.
     *
     * @return whether the job was queued
     */
    public boolean addIfAbsent(String type, String jobId, JsonNode data) {
        String json = data.toString();
        return kv.run(tx -> {
            Record r = read(tx, type, jobId);
            if (r != null && r.state != State.FINISHED) return Boolean.FALSE;
            write(tx, type, jobId, State.PENDING, json, null, false, false);
            enqueue(tx, type, jobId);
            return Boolean.TRUE;
        }, tx -> {
            Record r = read(tx, type, jobId); // after a 1021: our record there means that attempt queued it
            return r != null && r.state != State.FINISHED && json.equals(r.data) ? Optional.of(Boolean.TRUE) : Optional.empty();
        });
    }

    /** Takes the oldest pending job, waiting up to {@code maxWait} for one; empty if none came. */
    public Optional<Lease> accept(String type, Duration maxWait) {
        long deadline = System.nanoTime() + maxWait.toNanos();
        while (true) {
            String leaseId = UUID.randomUUID().toString();
            record Taken(Lease lease, CompletableFuture<Void> watch) {}
            Taken t = kv.run(tx -> {
                byte[][] r = range(type, PENDING);
                List<KeyValue> first = tx.getRangeAsList(r[0], r[1], 1, false); // a conflict range: one taker wins
                if (first.isEmpty()) return new Taken(null, tx.watch(key(type, NOTIFY)));
                tx.clear(first.getFirst().key());
                String jobId = unpack(first.getFirst().key()).getString(3);
                Record rec = read(tx, type, jobId);
                if (rec == null || rec.state != State.PENDING) return new Taken(null, null); // removed meanwhile: look again
                write(tx, type, jobId, State.RUNNING, rec.data, leaseId, true, false);
                return new Taken(new Lease(type, jobId, leaseId, parse(rec.data)), null);
            }, tx -> {
                // After a 1021: did that attempt take a job? Its record carries our lease id.
                byte[][] r = range(type, JOB);
                for (KeyValue kv : tx.getRangeAsList(r[0], r[1], 0, false)) {
                    String id = unpack(kv.key()).getString(2);
                    Record rec = read(tx, type, id);
                    if (rec.state == State.RUNNING && leaseId.equals(rec.leaseId)) {
                        return Optional.of(new Taken(new Lease(type, id, leaseId, parse(rec.data)), null));
                    }
                }
                return Optional.empty();
            });
            if (t.lease != null) return Optional.of(t.lease);
            if (t.watch == null) continue;
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                t.watch.cancel(true);
                return Optional.empty();
            }
            await(t.watch, left);
        }
    }

    /** Progress from the lease holder: new data, and proof of life. */
    public void update(Lease lease, JsonNode data) {
        String json = data.toString();
        kv.run(tx -> {
            Record r = holding(tx, lease);
            write(tx, lease.type(), lease.jobId(), State.RUNNING, json, lease.leaseId(), true, r.again);
            return Boolean.TRUE;
        }, tx -> Optional.empty()); // after a 1021, updating again is harmless
    }

    /** Ends the job with a result; if it was added again while running, it goes back in the queue. */
    public void finish(Lease lease, JsonNode result) {
        String json = result.toString();
        kv.run(tx -> {
            Record r = holding(tx, lease);
            if (r.again) {
                write(tx, lease.type(), lease.jobId(), State.PENDING, r.data, null, false, false);
                enqueue(tx, lease.type(), lease.jobId());
            } else {
                write(tx, lease.type(), lease.jobId(), State.FINISHED, json, null, false, false);
            }
            return Boolean.TRUE;
        }, tx -> {
            // After a 1021: no longer running under this lease means that attempt finished it.
            Record r = read(tx, lease.type(), lease.jobId());
            boolean ours = r != null && r.state == State.RUNNING && lease.leaseId().equals(r.leaseId);
            return ours ? Optional.empty() : Optional.of(Boolean.TRUE);
        });
    }

    /**
     * Gives the job back: pending again at once, for any server's worker to take, instead of
     * waiting for the activity monitor to find it stale. A stopping server does this for the jobs
     * it holds. A lease already lost is left alone.
     */
    public void release(Lease lease) {
        kv.run(tx -> {
            Record r = read(tx, lease.type(), lease.jobId());
            if (r == null || r.state != State.RUNNING || !lease.leaseId().equals(r.leaseId)) return Boolean.FALSE;
            write(tx, lease.type(), lease.jobId(), State.PENDING, r.data, null, false, false);
            enqueue(tx, lease.type(), lease.jobId());
            return Boolean.TRUE;
        }, tx -> {
            Record r = read(tx, lease.type(), lease.jobId()); // after a 1021: no longer ours means that attempt released it
            boolean ours = r != null && r.state == State.RUNNING && lease.leaseId().equals(r.leaseId);
            return ours ? Optional.empty() : Optional.of(Boolean.TRUE);
        });
    }

    private Record holding(Transaction tx, Lease lease) {
        Record r = read(tx, lease.type(), lease.jobId());
        if (r == null || r.state != State.RUNNING || !lease.leaseId().equals(r.leaseId)) {
            throw new LeaseLostException(lease.type(), lease.jobId());
        }
        return r;
    }

    public void remove(String type, String jobId) {
        kv.run(tx -> {
            dequeue(tx, type, jobId);
            tx.clear(key(type, JOB, jobId));
            return Boolean.TRUE;
        }, tx -> Optional.empty());
    }

    public Optional<Job> get(String type, String jobId) {
        return kv.run(tx -> Optional.ofNullable(read(tx, type, jobId)).map(r -> r.job(type, jobId)));
    }

    public List<Job> list(String type) {
        return kv.run(tx -> {
            byte[][] r = range(type, JOB);
            List<Job> out = new ArrayList<>();
            for (KeyValue kv : tx.getRangeAsList(r[0], r[1], 0, false)) out.add(decode(kv.value()).job(type, unpack(kv.key()).getString(2)));
            return out;
        });
    }

    /**
     * Re-queues, at once, the running jobs whose worker cannot be alive: on a store with one
     * process ({@link KvStore#singleProcess}), every running job, since this process has taken none
     * yet; on a shared cluster, those held by this node, which must have crashed or stopped before
     * finishing them. Call it before this node's workers start.
     *
     * @return how many jobs were re-queued
     */
    public int requeueOrphans(String type) {
        boolean all = kv.singleProcess();
        List<String> orphans = kv.run(tx -> {
            byte[][] r = range(type, JOB);
            List<String> out = new ArrayList<>();
            for (KeyValue kv : tx.snapshot().getRangeAsList(r[0], r[1], 0, false)) {
                Record rec = decode(kv.value());
                if (rec.state == State.RUNNING && (all || node.equals(rec.node))) out.add(unpack(kv.key()).getString(2));
            }
            return out;
        });
        int requeued = 0;
        for (String id : orphans) {
            if (requeueIf(type, id, rec -> all || node.equals(rec.node))) requeued++;
        }
        return requeued;
    }

    /** Puts a running job back in the queue if {@code stillOrphaned} holds for it in the re-queuing transaction. */
    private boolean requeueIf(String type, String id, java.util.function.Predicate<Record> stillOrphaned) {
        return kv.run(tx -> {
            Record rec = read(tx, type, id);
            if (rec == null || rec.state != State.RUNNING || !stillOrphaned.test(rec)) return false;
            write(tx, type, id, State.PENDING, rec.data, null, false, false);
            enqueue(tx, type, id);
            return true;
        }, tx -> {
            Record rec = read(tx, type, id); // after a 1021: pending again means that attempt did it
            return rec != null && rec.state == State.PENDING ? Optional.of(true) : Optional.empty();
        });
    }

    /** Waits until the job is in {@code state} (woken by a watch on its record); empty on timeout. */
    public Optional<Job> awaitState(String type, String jobId, State state, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            record Seen(Job job, CompletableFuture<Void> watch) {}
            Seen s = kv.run(tx -> {
                Record r = read(tx, type, jobId);
                if (r != null && r.state == state) return new Seen(r.job(type, jobId), null);
                return new Seen(null, tx.watch(key(type, JOB, jobId)));
            });
            if (s.job != null) return Optional.of(s.job);
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                s.watch.cancel(true);
                return Optional.empty();
            }
            await(s.watch, left);
        }
    }

    /**
     * One pass of the activity monitor: running jobs whose Activity is unchanged since the previous
     * pass are re-queued. Call it every activity timeout; {@code seen} carries Activity between passes.
     *
     * @return how many jobs were re-queued
     */
    public int requeueStale(String type, Map<String, Versionstamp> seen) {
        Map<String, Versionstamp> now = new HashMap<>();
        List<String> stale = new ArrayList<>();
        kv.run(tx -> {
            now.clear();
            stale.clear();
            byte[][] r = range(type, JOB);
            for (KeyValue kv : tx.snapshot().getRangeAsList(r[0], r[1], 0, false)) {
                String id = unpack(kv.key()).getString(2);
                Record rec = read(tx.snapshot(), type, id);
                if (rec.state != State.RUNNING || rec.activity == null) continue;
                now.put(id, rec.activity);
                if (rec.activity.equals(seen.get(id))) stale.add(id);
            }
            return null;
        });
        int requeued = 0;
        for (String id : stale) {
            Versionstamp was = now.get(id);
            if (requeueIf(type, id, rec -> was.equals(rec.activity))) { // else alive after all
                requeued++;
                now.remove(id);
            }
        }
        seen.clear();
        seen.putAll(now);
        return requeued;
    }

    private void await(CompletableFuture<Void> watch, long nanos) {
        kv.timer().time(StoreTimer.Waits.WATCH, () -> {
            try {
                watch.get(nanos, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                watch.cancel(true);
            } catch (InterruptedException e) {
                watch.cancel(true);
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for a job", e);
            } catch (ExecutionException e) {
                // a failed watch just means: look again
            }
            return null;
        });
    }

    private static JsonNode parse(String json) {
        try {
            return Json.MAPPER.readTree(json);
        } catch (IOException e) {
            throw new IllegalStateException("a stored job's data is not JSON", e);
        }
    }

    private static byte[] littleEndian(long v) {
        return java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }
}
