package dev.chaise.storage.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.bench.BenchLoop;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.Database;
import dev.chaise.storage.ExplodedJson;
import dev.chaise.storage.Storage;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.json.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

/**
 * Document writes and reads through the storage layer on the durable embedded engine: single-doc
 * inserts at 1, 8 and 64 writers, batches of 1,000, and reads by id (latency percentiles).
 *
 * <p>Run: {@code storage-fdb/bench.sh DocumentStoreBench [seconds] [single,bulk,read]}. Figures go to docs/benchmarks.md.
 */
public final class DocumentStoreBench {
    private static final String[] WORDS = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"};

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        String phases = args.length > 1 ? args[1] : "single,bulk,read";
        System.out.printf("example doc: %d bytes of JSON%n", ExplodedJson.externalSize(doc(0)));
        Path dir = Files.createTempDirectory("chaise-docbench-");
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir));
             Storage store = new Storage(kv, "{}")) {
            store.create("bench");
            AtomicLong ids = new AtomicLong();
            run("warm-up", store, 8, 2, ids); // JIT, discarded
            if (phases.contains("bulk")) bulk(store, 2, 4, ids); // C2 compiles the batch path for seconds: measure after it
            for (int writers : phases.contains("single") ? new int[] {1, 8, 64} : new int[0]) {
                double rate = run("single", store, writers, seconds, ids);
                System.out.printf("single-doc inserts, %2d writers: %8.0f docs/s, %5.1f us CPU/doc%n", writers, rate, BenchLoop.lastCpuNanosPerOp / 1e3);
            }
            for (int writers : phases.contains("bulk") ? new int[] {1, 2, 4} : new int[0]) {
                long conflicts = store.kv().timer().count(dev.chaise.kv.StoreTimer.Counts.CONFLICTS);
                var waits = store.kv().timer().snapshot();
                long before = ids.get();
                double rate = bulk(store, writers, seconds, ids);
                System.out.printf("batches of 1,000, %d writer(s):   %8.0f docs/s, %5.1f us CPU/doc, %d conflicts, %d docs stored%n", writers, rate,
                        BenchLoop.lastCpuNanosPerOp / 1e3, store.kv().timer().count(dev.chaise.kv.StoreTimer.Counts.CONFLICTS) - conflicts, ids.get());
                printWaits(waits, store.kv().timer().snapshot(), ids.get() - before);
            }
            if (phases.contains("read")) {
                System.out.print("right after the load (compactions still running), ");
                reads(store, ids.get(), seconds);
                Thread.sleep(30_000);
                System.out.print("30 s later, ");
                reads(store, ids.get(), seconds);
            }
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** The store's named waits and counts during a phase, per batch: where a writer's time goes besides its own CPU. */
    static void printWaits(java.util.Map<String, dev.chaise.kv.StoreTimer.Stat> before, java.util.Map<String, dev.chaise.kv.StoreTimer.Stat> after, long docs) {
        StringBuilder sb = new StringBuilder("  per 1,000 docs:");
        after.forEach((name, a) -> {
            var b = before.getOrDefault(name, new dev.chaise.kv.StoreTimer.Stat(0, 0));
            long n = a.count() - b.count();
            long nanos = a.totalNanos() - b.totalNanos();
            if (n == 0) return;
            sb.append(String.format(" %s %.1f", name, n * 1000.0 / docs));
            sb.append(nanos > 0 ? String.format(" x %.1f us;", nanos / 1e3 / n) : ";");
        });
        System.out.println(sb);
    }

    /** About 400 bytes of JSON in 10 top-level fields. */
    static ObjectNode doc(long n) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        ObjectNode d = Json.NODES.objectNode();
        d.put("type", WORDS[(int) (n % WORDS.length)]);
        d.put("n", n);
        d.put("score", r.nextDouble());
        d.put("active", r.nextBoolean());
        d.put("name", "user-" + n + "-" + Long.toHexString(r.nextLong()));
        d.put("email", "user" + n + "@example.com");
        d.put("city", WORDS[r.nextInt(WORDS.length)] + " city");
        d.putArray("tags").add(WORDS[r.nextInt(WORDS.length)]).add(WORDS[r.nextInt(WORDS.length)]).add("x");
        d.putObject("address").put("street", r.nextInt(1000) + " Long Street Name Avenue").put("zip", String.format("%05d", r.nextInt(100000)));
        d.put("notes", "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam " + n);
        return d;
    }

    static String id(long n) {
        return String.format("doc-%010d", n);
    }

    static double run(String label, Storage store, int writers, int seconds, AtomicLong ids) throws InterruptedException {
        Database bench = store.open("bench");
        LongAdder done = new LongAdder();
        return BenchLoop.run(writers, 1, seconds, done, () -> {
            long n = ids.getAndIncrement();
            var r = bench.updateUnchecked(List.of(DocUpdate.edit(id(n), null, false, doc(n))), true).getFirst();
            if (!r.ok()) throw new IllegalStateException(r.error());
            done.increment();
        });
    }

    static double bulk(Storage store, int writers, int seconds, AtomicLong ids) throws InterruptedException {
        Database bench = store.open("bench");
        LongAdder done = new LongAdder();
        return BenchLoop.run(writers, 1, seconds, done, () -> {
            List<DocUpdate> batch = new ArrayList<>(1000);
            for (int i = 0; i < 1000; i++) {
                long n = ids.getAndIncrement();
                batch.add(DocUpdate.edit(id(n), null, false, doc(n)));
            }
            for (var r : bench.updateUnchecked(batch, true)) if (!r.ok()) throw new IllegalStateException(r.error());
            done.add(1000);
        });
    }

    static void reads(Storage store, long max, int seconds) {
        Database bench = store.open("bench");
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long[] lat = new long[2_000_000];
        int n = 0;
        while (System.nanoTime() < end && n < lat.length) {
            long k = ThreadLocalRandom.current().nextLong(max);
            long t = System.nanoTime();
            bench.get(id(k), null, false);
            lat[n++] = System.nanoTime() - t;
        }
        long[] l = Arrays.copyOf(lat, n);
        Arrays.sort(l);
        System.out.printf("read by id, 1 reader: %d reads, p50 %.1f us, p99 %.1f us%n", n, l[n / 2] / 1e3, l[(int) (n * 0.99)] / 1e3);
    }
}
