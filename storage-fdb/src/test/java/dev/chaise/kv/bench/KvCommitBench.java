package dev.chaise.kv.bench;

import dev.chaise.kv.KvStore;
import dev.chaise.kv.StoreTimer;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * Durable small transactions (6 keys of about 60 bytes, like a document insert) at 1, 8 and 64
 * concurrent committers: the embedded engine, and beside it raw RocksDB with the same group
 * commit (one writer thread, one synced WriteBatch per drained queue), which is the ceiling.
 *
 * <p>Run: {@code storage-fdb/bench.sh [seconds]}. Figures go to docs/benchmarks.md.
 */
public final class KvCommitBench {
    private static final int KEYS = 6;
    private static final int KEY_BYTES = 20;
    private static final int VALUE_BYTES = 40;

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int rounds = 3;
        int[] committers = {1, 8, 64};
        // JIT warm-up for both paths, discarded.
        rawRocks(8, 2);
        embedded(8, 2);
        System.out.printf("median of %d alternating rounds, %d s each after 2 s warm-up%n", rounds, seconds);
        System.out.printf("%-10s %10s %12s %12s %10s%n", "engine", "committers", "tx/s", "mean batch", "ratio");
        for (int c : committers) {
            List<Result> raw = new ArrayList<>();
            List<Result> ours = new ArrayList<>();
            for (int i = 0; i < rounds; i++) {
                raw.add(rawRocks(c, seconds));
                ours.add(embedded(c, seconds));
            }
            Result r = median(raw);
            Result o = median(ours);
            System.out.printf("%-10s %10d %12.0f %12.1f %10s%n", "rocksdb", c, r.tps, r.meanBatch, "");
            System.out.printf("%-10s %10d %12.0f %12.1f %9.0f%%%n", "chaise", c, o.tps, o.meanBatch, 100 * o.tps / r.tps);
        }
    }

    static Result median(List<Result> rs) {
        List<Result> sorted = new ArrayList<>(rs);
        sorted.sort(Comparator.comparingDouble(Result::tps));
        return sorted.get(sorted.size() / 2);
    }

    record Result(double tps, double meanBatch) {}

    static byte[][] randomTx() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        byte[][] kv = new byte[KEYS * 2][];
        for (int i = 0; i < KEYS; i++) {
            byte[] k = new byte[KEY_BYTES];
            byte[] v = new byte[VALUE_BYTES];
            r.nextBytes(k);
            k[0] = (byte) (k[0] & 0x7f); // stay out of the system key space
            r.nextBytes(v);
            kv[2 * i] = k;
            kv[2 * i + 1] = v;
        }
        return kv;
    }

    static Result embedded(int committers, int seconds) throws Exception {
        Path dir = Files.createTempDirectory("chaise-bench-");
        try (KvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            LongAdder done = new LongAdder();
            double rate = BenchLoop.run(committers, 2, seconds, done, () -> {
                byte[][] kv = randomTx();
                try (Transaction tx = store.createTransaction()) {
                    for (int i = 0; i < KEYS; i++) tx.set(kv[2 * i], kv[2 * i + 1]);
                    tx.commit();
                }
                done.increment();
            });
            long commits = store.timer().count(StoreTimer.Counts.COMMITS);
            long batches = store.timer().count(StoreTimer.Counts.COMMIT_BATCHES);
            return new Result(rate, (double) commits / Math.max(1, batches));
        } finally {
            deleteTree(dir);
        }
    }

    static Result rawRocks(int committers, int seconds) throws Exception {
        Path dir = Files.createTempDirectory("chaise-bench-raw-");
        record Req(byte[][] kv, CompletableFuture<Void> done) {}
        LinkedBlockingQueue<Req> queue = new LinkedBlockingQueue<>();
        AtomicBoolean running = new AtomicBoolean(true);
        LongAdder batches = new LongAdder();
        LongAdder txs = new LongAdder();
        try (Options o = new Options().setCreateIfMissing(true); RocksDB db = RocksDB.open(o, dir.toString());
             WriteOptions wo = new WriteOptions().setSync(true)) {
            Thread writer = Thread.ofPlatform().start(() -> {
                List<Req> batch = new ArrayList<>();
                while (running.get() || !queue.isEmpty()) {
                    try {
                        Req first = queue.poll(50, java.util.concurrent.TimeUnit.MILLISECONDS);
                        if (first == null) continue;
                        batch.add(first);
                        queue.drainTo(batch);
                        try (WriteBatch wb = new WriteBatch()) {
                            for (Req r : batch) for (int i = 0; i < KEYS; i++) wb.put(r.kv[2 * i], r.kv[2 * i + 1]);
                            db.write(wo, wb);
                        }
                        batches.increment();
                        txs.add(batch.size());
                        batch.forEach(r -> r.done.complete(null));
                        batch.clear();
                    } catch (Exception e) {
                        batch.forEach(r -> r.done.completeExceptionally(e));
                        batch.clear();
                    }
                }
            });
            LongAdder done = new LongAdder();
            double rate = BenchLoop.run(committers, 2, seconds, done, () -> {
                Req r = new Req(randomTx(), new CompletableFuture<>());
                queue.add(r);
                r.done.join();
                done.increment();
            });
            running.set(false);
            writer.join();
            return new Result(rate, txs.sum() / (double) Math.max(1, batches.sum()));
        } finally {
            deleteTree(dir);
        }
    }

    static void deleteTree(Path dir) throws Exception {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
