package dev.chaise.views.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.Database;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.Storage;
import dev.chaise.storage.json.Json;
import dev.chaise.views.ViewsModule;
import dev.chaise.views.mango.Find;
import dev.chaise.views.mango.Mango;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

/**
 * couchbench's find phase without HTTP, on the durable embedded engine: documents shaped like
 * couchbench's (about 300 bytes), a JSON index on {@code type, score}, the first query (which
 * builds it) timed, then sorted {@code limit: 25} queries and {@code fields} projections, with the
 * process CPU each phase took (steadier than wall time on a shared machine). With {@code bulk}
 * it then loads the same documents again into databases with 0 and with 3 JSON indexes built as
 * the writes go (interactive), to weigh what indexes cost writers.
 *
 * <p>Run (no install): {@code ./mvnw -q -pl views -am test-compile dependency:build-classpath
 * -Dmdep.outputFile=target/bench.cp -Dmdep.includeScope=test}, then {@code java -cp
 * views/target/classes:views/target/test-classes:$(cat views/target/bench.cp)
 * dev.chaise.views.bench.MangoBench [docs] [queries] [bulk]}.
 */
public final class MangoBench {
    static final String[] TYPES = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"};

    public static void main(String[] args) throws Exception {
        int docs = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        int queries = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        boolean bulk = args.length > 2 && args[2].equals("bulk");
        Path dir = Files.createTempDirectory("chaise-mangobench-");
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir));
             Storage store = new Storage(kv, "{}")) {
            Database db = store.create("bench");
            load(db, docs, 0);
            ViewsModule views = new ViewsModule(store, null);
            Mango mango = new Mango(views.queries(), new dev.chaise.stats.Stats());
            mango.indexes().create(db.openFor(dev.chaise.storage.UserCtx.server("test"), dev.chaise.storage.SecuredDb.Level.MEMBER), json("{\"index\":{\"fields\":[\"type\",\"score\"]},\"name\":\"ts\",\"ddoc\":\"benchfind\",\"type\":\"json\"}"));
            long cpu = cpu();
            long t0 = System.nanoTime();
            Find.Result first = mango.find(db, sorted("gamma", 500_000));
            System.out.printf("first query (builds the index over %d docs): %.3f s, %.2f s CPU, %d docs%n", docs, (System.nanoTime() - t0) / 1e9,
                    (cpu() - cpu) / 1e9, first.docs().size());
            for (int round = 0; round < 3; round++) {
                double[] s = new double[queries];
                double[] p = new double[queries];
                long wrong = 0;
                cpu = cpu();
                for (int i = 0; i < queries; i++) {
                    String t = TYPES[i % TYPES.length];
                    int lo = (i * 7919) % 900_000;
                    long a = System.nanoTime();
                    Find.Result r = mango.find(db, sorted(t, lo));
                    s[i] = (System.nanoTime() - a) / 1e6;
                    for (int k = 0; k < r.docs().size(); k++) {
                        JsonNode d = r.docs().get(k);
                        if (!d.get("type").asText().equals(t) || d.get("score").asInt() <= lo
                                || (k > 0 && d.get("score").asInt() < r.docs().get(k - 1).get("score").asInt())) wrong++;
                    }
                    a = System.nanoTime();
                    mango.find(db, json("{\"selector\":{\"type\":\"" + t + "\",\"score\":{\"$gte\":" + lo + "}},\"fields\":[\"_id\",\"score\"],\"limit\":25}"));
                    p[i] = (System.nanoTime() - a) / 1e6;
                }
                System.out.printf("round %d: sorted limit 25 p50 %.3f ms p90 %.3f ms; fields p50 %.3f ms p90 %.3f ms; wrong rows %d; %.1f us CPU per query%n",
                        round, pct(s, 50), pct(s, 90), pct(p, 50), pct(p, 90), wrong, (cpu() - cpu) / 1e3 / (2.0 * queries));
            }
            if (bulk) {
                ViewsModule interactiveViews = new ViewsModule(store, null).enableInteractiveViews(); // one write hook for the store
                Mango m = new Mango(interactiveViews.queries(), new dev.chaise.stats.Stats());
                for (int indexes : new int[] {0, 3, 0, 3}) {
                    Database d = store.create("bulk" + indexes + "-" + System.nanoTime());
                    if (indexes > 0) {
                        for (String f : List.of("[\"type\",\"score\"]", "[\"name\"]", "[\"n\"]")) {
                            m.indexes().create(d.openFor(dev.chaise.storage.UserCtx.server("test"), dev.chaise.storage.SecuredDb.Level.MEMBER), json("{\"index\":{\"fields\":" + f + "},\"interactive\":true}"));
                        }
                    }
                    long c = cpu();
                    long a = System.nanoTime();
                    var before = kv.timer().snapshot();
                    load(d, docs, 0);
                    var after = kv.timer().snapshot();
                    for (String k : List.of("count.COMMITS", "count.RETRIES", "count.CONFLICTS")) {
                        long x = after.containsKey(k) ? after.get(k).count() : 0;
                        long y = before.containsKey(k) ? before.get(k).count() : 0;
                        System.out.print(k + "=" + (x - y) + " ");
                    }
                    double sec = (System.nanoTime() - a) / 1e9;
                    System.out.printf("bulk into a database with %d interactive JSON indexes: %.0f docs/s, %.1f us CPU per doc%n", indexes, docs / sec,
                            (cpu() - c) / 1e3 / docs);
                }
            }
            views.close();
        } finally {
            try (Stream<Path> walk = Files.walk(dir)) {
                walk.sorted(Comparator.reverseOrder()).forEach(x -> x.toFile().delete());
            }
        }
    }

    static void load(Database db, int docs, int from) {
        Random rnd = new Random(67890);
        for (int i = 0; i < docs; i += 1000) {
            List<DocUpdate> batch = new ArrayList<>();
            for (int j = i; j < Math.min(docs, i + 1000); j++) batch.add(DocUpdate.edit(String.format("b%07d", j + from), null, false, doc(j, rnd)));
            db.updateUnchecked(batch, true);
        }
    }

    static ObjectNode doc(int i, Random rnd) {
        ObjectNode d = Json.NODES.objectNode();
        d.put("type", TYPES[i % TYPES.length]);
        d.put("n", i);
        d.put("score", rnd.nextInt(1_000_000));
        d.putArray("tags").add(TYPES[(i * 7) % 10]).add("x" + (i % 100));
        d.put("name", "user-" + i);
        d.put("created", "2024-01-01T00:00:00Z");
        d.put("text", "x".repeat(150));
        return d;
    }

    static ObjectNode sorted(String type, int lo) {
        return (ObjectNode) json("{\"selector\":{\"type\":\"" + type + "\",\"score\":{\"$gt\":" + lo + "}},\"sort\":[{\"type\":\"asc\"},{\"score\":\"asc\"}],\"limit\":25}");
    }

    static JsonNode json(String s) {
        try {
            return Json.MAPPER.readTree(s);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    static long cpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    static double pct(double[] v, int p) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1)];
    }
}
