package dev.chaise.views.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.Database;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.Storage;
import dev.chaise.storage.json.Json;
import dev.chaise.views.JavaMaps;
import dev.chaise.views.ViewQueries;
import dev.chaise.views.ViewsModule;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.query.ViewQuery;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * couchbench's view phase without HTTP: 100,000 docs, a view {@code emit(doc.type, 1)} with
 * {@code _count}, the first build timed, then {@code group=true} and {@code reduce=false&key=..&limit=10}
 * query latencies. With {@code java} the map runs in Java (the storage side alone); the JS engine
 * is measured when one is given by class name.
 *
 * <p>Run: {@code views/bench.sh ViewBuildBench [docs] [workers] [engine-class]}.
 */
public final class ViewBuildBench {
    static final String[] TYPES = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"};

    public static void main(String[] args) throws Exception {
        int docs = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        int workers = args.length > 1 ? Integer.parseInt(args[1]) : Runtime.getRuntime().availableProcessors();
        String engine = args.length > 2 ? args[2] : "java";
        Path dir = Files.createTempDirectory("chaise-viewbench-");
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir));
             Storage store = new Storage(kv, "{}")) {
            Database bench = store.create("bench");
            for (int i = 0; i < docs; i += 1000) {
                List<DocUpdate> batch = new ArrayList<>();
                for (int j = i; j < Math.min(docs, i + 1000); j++) batch.add(DocUpdate.edit(String.format("doc-%08d", j), null, false, doc(j)));
                bench.updateUnchecked(batch, true);
            }
            JsEngine js;
            String map;
            if (engine.equals("java")) {
                js = new JavaMaps().define("byType", (doc, emit) -> emit.accept(doc.get("type"), Json.NODES.numberNode(1)));
                map = "byType";
            } else {
                js = (JsEngine) Class.forName(engine).getMethod("createDefault").invoke(null);
                map = "function(doc){ emit(doc.type, 1); }";
            }
            ObjectNode ddoc = Json.NODES.objectNode();
            ddoc.putObject("views").putObject("t").put("map", map).put("reduce", "_count");
            bench.updateUnchecked(List.of(DocUpdate.edit("_design/b", null, false, ddoc)), true);
            ViewsModule views = new ViewsModule(store, js, new ViewsModule.Options(workers, 5_000));
            long t0 = System.nanoTime();
            query(views, bench, q(ViewQuery.Update.TRUE, null, 0, false));
            double build = (System.nanoTime() - t0) / 1e9;
            System.out.printf("build: %d docs in %.2f s = %.0f docs/s (%d workers, %s maps)%n", docs, build, docs / build, workers, engine);
            latency("group=true", views, bench, q(ViewQuery.Update.TRUE, null, 0, true), 300);
            latency("reduce=false&key=..&limit=10", views, bench, q(ViewQuery.Update.TRUE, Json.NODES.textNode("charlie"), 10, false), 300);
            js.close();
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    static ViewQuery q(ViewQuery.Update update, com.fasterxml.jackson.databind.JsonNode key, long limit, boolean group) {
        return new ViewQuery(null, key, null, key, null, true, false, 0, limit == 0 ? Long.MAX_VALUE : limit, false, null, false,
                key != null ? Boolean.FALSE : null, group ? Boolean.TRUE : null, null, update, true, key != null);
    }

    static int query(ViewsModule views, Database bench, ViewQuery q) {
        int n = 0;
        try (ViewQueries.Result r = views.queries().query(bench, "_design/b", "t", q)) {
            while (r.rows().hasNext()) {
                r.rows().next();
                n++;
            }
        }
        return n;
    }

    static void latency(String label, ViewsModule views, Database bench, ViewQuery q, int runs) {
        for (int i = 0; i < 50; i++) query(views, bench, q); // warm-up
        long[] t = new long[runs];
        for (int i = 0; i < runs; i++) {
            long s = System.nanoTime();
            query(views, bench, q);
            t[i] = System.nanoTime() - s;
        }
        java.util.Arrays.sort(t);
        System.out.printf("%-30s p50 %.2f ms, p99 %.2f ms%n", label, t[runs / 2] / 1e6, t[runs * 99 / 100] / 1e6);
    }

    static ObjectNode doc(int n) {
        ObjectNode d = Json.NODES.objectNode();
        d.put("type", TYPES[n % TYPES.length]);
        d.put("n", n);
        d.put("name", "user-" + n);
        d.put("email", "user" + n + "@example.com");
        d.putArray("tags").add(TYPES[(n * 7) % TYPES.length]).add("x");
        d.put("notes", "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor " + n);
        return d;
    }
}
