package dev.chaise.views.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.js.GraalJsEngine;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.js.JsFunctionException;
import dev.chaise.views.js.MapOutcome;
import dev.chaise.views.js.MapProgram;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.mozilla.javascript.Context;
import org.mozilla.javascript.Scriptable;

/**
 * Map throughput, documents per second, of GraalJS (through {@link GraalJsEngine}, the production
 * path) against Rhino 1.9 in compiled mode doing the same work: the document crosses in as one JSON
 * string, is parsed and frozen in JavaScript, rows come back as one string parsed with Jackson.
 *
 * <p>Run: {@code views/bench.sh JsMapBench [seconds [maps [engines [threads]]]]}. Figures go to docs/benchmarks.md.
 */
public final class JsMapBench {
    static final String EMPTY = "function(doc) {}";
    static final String SIMPLE = "function(doc) { emit(doc._id, 1); emit([doc.type, doc.n], doc.title); }";
    static final String HEAVY = """
            function(doc) {
              var h = 0, s = doc.body;
              for (var r = 0; r < 20; r++)
                for (var i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
              var words = s.split(' '), counts = {};
              for (var j = 0; j < words.length; j++) counts[words[j]] = (counts[words[j]] || 0) + 1;
              emit(h, Object.keys(counts).length);
            }""";

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        List<String> only = args.length > 1 ? List.of(args[1].split(",")) : List.of("empty", "simple", "heavy");
        List<String> engines = args.length > 2 ? List.of(args[2].split(",")) : List.of("graaljs", "rhino");
        int[] threadCounts = args.length > 3 ? new int[] {Integer.parseInt(args[3])} : new int[] {1, 2};
        List<String> docs = docs(1000);
        System.out.printf("mean doc size %d bytes; %d s per run after 2 s warm-up; median of 3%n",
                docs.stream().mapToInt(String::length).sum() / docs.size(), seconds);
        System.out.printf("%-10s %-8s %8s %12s %14s%n", "engine", "map", "threads", "docs/s", "docs/CPU-s");
        try (GraalJsEngine graal = GraalJsEngine.createDefault()) {
            for (String[] m : new String[][] {{"empty", EMPTY}, {"simple", SIMPLE}, {"heavy", HEAVY}}) {
                if (!only.contains(m[0])) continue;
                for (int threads : threadCounts) {
                    if (engines.contains("graaljs")) report("graaljs", m[0], threads, median(3, () -> run(threads, seconds, docs, () -> {
                        try {
                            MapProgram p = graal.mapProgram(new JsEngine.MapSource("_design/b", List.of(m[1]), null));
                            return new Mapper() {
                                public List<MapOutcome> map(String doc) {
                                    return p.map(doc);
                                }

                                public void close() {
                                    p.close();
                                }
                            };
                        } catch (JsFunctionException e) {
                            throw new IllegalStateException(e);
                        }
                    })));
                    if (engines.contains("rhino")) report("rhino", m[0], threads, median(3, () -> run(threads, seconds, docs, () -> new RhinoMap(List.of(m[1])))));
                }
            }
        }
    }

    static void report(String engine, String map, int threads, Rate rate) {
        System.out.printf(Locale.ROOT, "%-10s %-8s %8d %12.0f %14.0f%n", engine, map, threads, rate.wall(), rate.perCpuSecond());
    }

    interface Mapper extends AutoCloseable {
        List<MapOutcome> map(String doc);

        @Override
        void close();
    }

    interface Bench {
        Rate run() throws Exception;
    }

    static Rate median(int n, Bench b) throws Exception {
        List<Rate> rs = new ArrayList<>();
        for (int i = 0; i < n; i++) rs.add(b.run());
        rs.sort(java.util.Comparator.comparingDouble(Rate::wall));
        return rs.get(n / 2);
    }

    /** Each thread builds its own mapper (a program or a Rhino context) and maps docs round-robin. */
    /** Process CPU time, so that a busy shared machine shows as lower docs/s but similar docs per CPU-second. */
    static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();

    record Rate(double wall, double perCpuSecond) {}

    static Rate run(int threads, int seconds, List<String> docs, Supplier<Mapper> mapper)
            throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder done = new LongAdder();
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int offset = t * 37;
            ts.add(Thread.ofPlatform().start(() -> {
                try (Mapper m = mapper.get()) {
                    for (int i = offset; !stop.get(); i++) {
                        List<MapOutcome> out = m.map(docs.get(i % docs.size()));
                        if (!(out.get(0) instanceof MapOutcome.Rows)) throw new IllegalStateException(out.toString());
                        done.increment();
                    }
                }
            }));
        }
        Thread.sleep(2_000);
        long c0 = done.sum(), t0 = System.nanoTime(), cpu0 = OS.getProcessCpuTime();
        Thread.sleep(seconds * 1_000L);
        long c1 = done.sum(), t1 = System.nanoTime(), cpu1 = OS.getProcessCpuTime();
        stop.set(true);
        for (Thread t : ts) t.join();
        return new Rate((c1 - c0) / ((t1 - t0) / 1e9), (c1 - c0) / ((cpu1 - cpu0) / 1e9));
    }

    /** About 400 bytes each, like the end-to-end view-build benchmark's documents. */
    static List<String> docs(int n) {
        String[] words = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"};
        List<String> out = new ArrayList<>();
        java.util.Random r = new java.util.Random(42);
        for (int i = 0; i < n; i++) {
            StringBuilder body = new StringBuilder();
            while (body.length() < 235) body.append(words[r.nextInt(words.length)]).append(' ');
            out.add(String.format(Locale.ROOT,
                    "{\"_id\":\"doc-%06d\",\"_rev\":\"1-%032x\",\"type\":\"%s\",\"n\":%d,\"score\":%.3f,"
                            + "\"title\":\"Title number %d\",\"tags\":[\"%s\",\"%s\"],\"body\":\"%s\"}",
                    i, r.nextLong() & Long.MAX_VALUE, i % 3 == 0 ? "post" : "page", r.nextInt(100000), r.nextDouble() * 100,
                    i, words[r.nextInt(10)], words[r.nextInt(10)], body.toString().trim()));
        }
        return out;
    }

    /** The same runtime as GraalJsEngine's (parse, deep freeze, emit serialising each row), in Rhino's compiled mode. */
    static final class RhinoMap implements Mapper {
        private static final String RUNTIME = """
                var __fns = [], __out = null;
                function __freeze(o) {
                  if (o !== null && typeof o === 'object') {
                    Object.freeze(o);
                    if (Array.isArray(o)) for (var i = 0; i < o.length; i++) __freeze(o[i]);
                    else { var ks = Object.keys(o); for (var j = 0; j < ks.length; j++) __freeze(o[ks[j]]); }
                  }
                  return o;
                }
                function emit(k, v) { __out.push(JSON.stringify([k, v])); }
                function __map(json) {
                  var doc = __freeze(JSON.parse(json)), parts = [];
                  for (var i = 0; i < __fns.length; i++) {
                    __out = [];
                    try { __fns[i](doc); parts.push('[' + __out.join(',') + ']'); }
                    catch (e) { parts.push('!' + JSON.stringify({error: String(e.name), reason: String(e.message)})); }
                  }
                  return parts.join('\\n');
                }
                """;
        private final Context cx;
        private final Scriptable scope;
        private final org.mozilla.javascript.Function map;

        RhinoMap(List<String> maps) {
            cx = Context.enter();
            cx.setInterpretedMode(false);
            cx.setLanguageVersion(Context.VERSION_ECMASCRIPT);
            scope = cx.initSafeStandardObjects();
            cx.evaluateString(scope, RUNTIME, "runtime", 1, null);
            for (String m : maps) cx.evaluateString(scope, "__fns.push(" + m + ")", "map", 1, null);
            map = (org.mozilla.javascript.Function) scope.get("__map", scope);
        }

        @Override
        public void close() {
            Context.exit();
        }

        @Override
        public List<MapOutcome> map(String doc) {
            String out = Context.toString(map.call(cx, scope, scope, new Object[] {doc}));
            List<MapOutcome> res = new ArrayList<>();
            for (String line : out.split("\n", -1)) {
                try {
                    JsonNode rows = Json.MAPPER.readTree(line);
                    List<MapOutcome.Emit> emits = new ArrayList<>(rows.size());
                    for (JsonNode row : rows) emits.add(new MapOutcome.Emit(row.get(0), row.get(1)));
                    res.add(new MapOutcome.Rows(emits));
                } catch (Exception e) {
                    res.add(new MapOutcome.Failed("error", line));
                }
            }
            return res;
        }
    }
}
