package dev.chaise.views.js;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class GraalJsEngineTest {
    static GraalJsEngine js;

    @BeforeAll
    static void start() {
        js = GraalJsEngine.create(new GraalJsEngine.Options(Duration.ofMillis(500), 4));
    }

    @AfterAll
    static void stop() {
        js.close();
    }

    static JsonNode j(String s) {
        try {
            return Json.MAPPER.readTree(s.replace('\'', '"'));
        } catch (Exception e) {
            throw new AssertionError(s, e);
        }
    }

    /** Every view's outcome for one doc, as text: rows as [[k,v],...], failures as "!error: reason". */
    static List<String> map(JsonNode lib, String doc, String... maps) throws JsFunctionException {
        try (MapProgram p = js.mapProgram(new JsEngine.MapSource("_design/t", List.of(maps), lib))) {
            List<String> out = new ArrayList<>();
            for (MapOutcome o : p.map(doc.replace('\'', '"'))) {
                out.add(switch (o) {
                    case MapOutcome.Rows r -> r.rows().stream().map(e -> "[" + e.key() + "," + e.value() + "]").toList().toString().replace(" ", "");
                    case MapOutcome.Failed f -> "!" + f.error() + ": " + f.reason();
                });
            }
            return out;
        }
    }

    @Test
    void emits() throws Exception {
        assertEquals(List.of("[[\"a\",1],[[\"a\",2],{\"x\":null}]]", "[]", "[[null,null],[1.5,null]]"),
                map(null, "{'_id':'a','n':2}",
                        "function(doc){ emit(doc._id, 1); emit([doc._id, doc.n], {x: null}); }",
                        "function(doc){ if (doc.nope) emit(1, 1); }",
                        "function(doc){ emit(undefined); emit(1.5, undefined); }"));
        // JS numbers are doubles, as in CouchDB's own JS view server: big integers round, -0 prints as 0.
        assertEquals(List.of("[[12345678901234567000,0]]"), map(null, "{'_id':'b'}", "function(doc){ emit(12345678901234567890, -0.0); }"));
    }

    @Test
    void trailingSemicolonsAfterAFunctionAreAccepted() throws Exception {
        assertEquals(List.of("[[\"a\",null]]", "[]"),
                map(null, "{'_id':'a'}", "function(doc){ emit(doc._id); };", "function(doc){} ;\n"));
    }

    @Test
    void modernSyntaxAndHelpers() throws Exception {
        assertEquals(List.of("[[\"a-2\",3],[\"t\",true],[\"j\",\"{\\\"k\\\":1}\"]]"), map(null, "{'_id':'a','v':[1,2],'o':{'k':1}}",
                "doc => { const {_id, v: [x, y]} = doc; let s = `${_id}-${y}`; emit(s, sum([x, y])); emit('t', isArray(doc.v)); emit('j', toJSON(doc.o)); }"));
        assertEquals(List.of("[[1,1],[2,2]]"), map(null, "{'xs':[1,2]}", "function(doc){ for (const x of doc.xs) emit(x, [...[x]][0]); }"));
    }

    @Test
    void requireFromViewsLib() throws Exception {
        JsonNode lib = j("{'a':'exports.f = x => x * 2; exports.g = require(\\'./b\\').h;','b':'exports.h = () => 7;','c':{'d':'module.exports = 42;'},'n':3}");
        assertEquals(List.of("[[4,7],[42,null]]"), map(lib, "{'n':2}",
                "function(doc){ var a = require('views/lib/a'); emit(a.f(doc.n), a.g()); emit(require('views/lib/c/d')); }"));
        List<String> bad = map(lib, "{}", "function(doc){ require('views/lib/zzz'); }", "function(doc){ require('views/lib/n'); }", "function(doc){ emit(1); }");
        assertTrue(bad.get(0).startsWith("!runtime_error") && bad.get(0).contains("module not found"), bad.get(0));
        assertTrue(bad.get(1).contains("not a module"), bad.get(1));
        assertEquals("[[1,null]]", bad.get(2), "one view's failure leaves the others alone");
    }

    @Test
    void documentsAreFrozen() throws Exception {
        List<String> out = map(null, "{'a':{'b':1}}", "function(doc){ 'use strict'; doc.a.b = 2; }", "function(doc){ emit(doc.a.b); }");
        assertTrue(out.get(0).startsWith("!runtime_error"), out.get(0));
        assertEquals("[[1,null]]", out.get(1));
    }

    @Test
    void compilationErrors() {
        JsFunctionException e = assertThrows(JsFunctionException.class, () -> map(null, "{}", "function(doc){ emit(1 }"));
        assertEquals("compilation_error", e.error());
        assertEquals("compilation_error", assertThrows(JsFunctionException.class, () -> map(null, "{}", "42")).error());
    }

    @Test
    void sandbox() throws Exception {
        List<String> out = map(null, "{}",
                "function(doc){ emit(typeof Java, typeof Polyglot); emit(typeof load, typeof print); emit(typeof Packages, typeof Graal); }",
                "function(doc){ Java.type('java.lang.System').exit(1); }",
                "function(doc){ emit(typeof (this.constructor.constructor('return this')()).Java); }");
        assertEquals("[[\"undefined\",\"undefined\"],[\"undefined\",\"undefined\"],[\"undefined\",\"undefined\"]]", out.get(0));
        assertTrue(out.get(1).startsWith("!runtime_error"), out.get(1));
        // As couchjs without --eval: code from strings (eval, Function) is refused (view_sandboxing_test).
        assertEquals("!runtime_error: EvalError: dynamic evaluation of code is disabled.", out.get(2));
        assertTrue(map(null, "{}", "function(doc){ emit(eval('1')); }").get(0).startsWith("!runtime_error: EvalError"));
        assertTrue(map(null, "{}", "function(doc){ emit((async function(){}).constructor('return 1')); }").get(0).startsWith("!runtime_error: EvalError"));
    }

    @Test
    void runawayFunctionsStopAndThePoolRecovers() throws Exception {
        List<String> out = map(null, "{}", "function(doc){ while (true) {} }", "function(doc){ emit(1); }");
        assertTrue(out.get(0).startsWith("!timeout"), out.get(0));
        assertEquals(List.of("[[1,null]]"), map(null, "{}", "function(doc){ emit(1); }"), "a new context serves the next call");
        assertEquals(List.of("[[2,null]]"), map(null, "{}", "function(doc){ while (true) {} }".replace("while (true) {}", "emit(2)")));
    }

    @Test
    void aProgramGoesOnAfterATimeout() throws Exception {
        try (MapProgram p = js.mapProgram(new JsEngine.MapSource("_design/t", List.of("function(doc){ while (doc.spin) {} emit(doc.n); }"), null))) {
            List<List<MapOutcome>> out = p.mapAll(List.of("{\"n\":1}", "{\"n\":2,\"spin\":true}", "{\"n\":3}"));
            assertEquals("[[1,null]]", text(out.get(0).getFirst()));
            assertEquals("!timeout: timeout", text(out.get(1).getFirst()));
            assertEquals("[[3,null]]", text(out.get(2).getFirst()), "the batch is retried doc by doc: only the runaway fails");
            assertEquals("[[4,null]]", text(p.map("{\"n\":4}").getFirst()), "and the program has a fresh context after");
            // Trees (what a view build passes) cross as one array too, and are retried the same way.
            List<com.fasterxml.jackson.databind.node.ObjectNode> trees = List.of(
                    Json.NODES.objectNode().put("n", 5), Json.NODES.objectNode().put("n", 6).put("spin", true), Json.NODES.objectNode().put("n", 7));
            List<List<MapOutcome>> docs = p.mapAllDocs(trees);
            assertEquals(List.of("[[5,null]]", "!timeout: timeout", "[[7,null]]"), docs.stream().map(o -> text(o.getFirst())).toList());
        }
    }

    /** A function that keeps what it allocates is stopped by the allocation limit, well before the timeout. */
    @Test
    void aFunctionThatHoardsMemoryIsStopped() throws Exception {
        try (GraalJsEngine small = GraalJsEngine.create(new GraalJsEngine.Options(Duration.ofSeconds(60), 2, 64L << 20))) {
            String hoard = "function(doc){ if (doc.hoard) { var a = []; while (true) a.push(new Array(10000).fill(doc.n)); } emit(doc.n); }";
            for (boolean virtual : new boolean[] {false, true}) { // virtual callers run on the engine's platform threads, which are metered
                List<List<MapOutcome>> out = new java.util.ArrayList<>();
                Runnable run = () -> {
                    try (MapProgram p = small.mapProgram(new JsEngine.MapSource("_design/m", List.of(hoard), null))) {
                        long t0 = System.nanoTime();
                        out.addAll(p.mapAll(List.of("{\"n\":1}", "{\"n\":2,\"hoard\":true}", "{\"n\":3}")));
                        assertTrue(System.nanoTime() - t0 < 30_000_000_000L, "stopped by the limit, not the 60 s timeout");
                    } catch (JsFunctionException e) {
                        throw new IllegalStateException(e);
                    }
                };
                Thread t = virtual ? Thread.ofVirtual().start(run) : Thread.ofPlatform().start(run);
                t.join();
                assertEquals(3, out.size(), "virtual=" + virtual);
                assertEquals("[[1,null]]", text(out.get(0).getFirst()));
                assertEquals("!memory_limit: the function allocated more than 64 MB in one call", text(out.get(1).getFirst()));
                assertEquals("[[3,null]]", text(out.get(2).getFirst()), "only the hoarding document fails");
            }
        }
    }

    static String text(MapOutcome o) {
        return switch (o) {
            case MapOutcome.Rows r -> r.rows().stream().map(e -> "[" + e.key() + "," + e.value() + "]").toList().toString().replace(" ", "");
            case MapOutcome.Failed f -> "!" + f.error() + ": " + f.reason();
        };
    }

    @Test
    void reduceAndRereduce() throws Exception {
        try (ReduceProgram p = js.reduceProgram(new JsEngine.ReduceSource("_design/t",
                List.of("function(keys, values, rereduce){ return rereduce ? sum(values) * 10 : keys.length + sum(values); }", "(k, v) => { throw 'fatal_error'; }",
                        "(k, v) => k[0].foo.bar"), null))) {
            assertEquals(j("7"), p.reduce(0, List.of(j("[1,'a']"), j("[2,'b']")), List.of(j("2"), j("3"))));
            assertEquals(j("50"), p.rereduce(0, List.of(j("2"), j("3"))));
            JsFunctionException e = assertThrows(JsFunctionException.class, () -> p.reduce(1, List.of(j("[1,'a']")), List.of(j("1"))));
            assertEquals("reduce_runtime_error", e.error());
            assertTrue(e.reason().contains("fatal_error"), e.reason());
            // Any other throw reduces to null (couchjs logs it and goes on).
            assertEquals(j("null"), p.reduce(2, List.of(j("['bar','1']")), List.of(j("null"))));
        }
    }

    @Test
    void filters() throws Exception {
        JsonNode ddoc = j("{'filters':{'even':'function(doc, req){ return doc.n % 2 == 0 && req.query.on == \\'1\\'; }','boom':'function(doc){ throw 1; }','broken':'function(doc {'},"
                + "'lib':{'m':'exports.yes = true;'},'uses':{}}");
        try (FilterProgram p = js.filterProgram(new JsEngine.DesignSource("_design/f", ddoc))) {
            assertTrue(p.has("even"));
            assertFalse(p.has("nope"));
            assertTrue(p.filter("even", "{\"n\":2}", j("{'query':{'on':'1'}}")));
            assertFalse(p.filter("even", "{\"n\":3}", j("{'query':{'on':'1'}}")));
            assertEquals("filter_error", assertThrows(JsFunctionException.class, () -> p.filter("boom", "{}", j("{}"))).error(),
                    "a filter that throws fails the request, as in CouchDB");
            assertTrue(p.filter("even", "{\"n\":2}", j("{'query':{'on':'1'}}")), "and the program goes on");
            assertEquals("compilation_error", assertThrows(JsFunctionException.class, () -> p.compile("broken")).error());
        }
    }

    @Test
    void concurrentUseFromPlatformAndVirtualThreads() throws Exception {
        for (ExecutorService pool : List.of(Executors.newFixedThreadPool(4), Executors.newVirtualThreadPerTaskExecutor())) {
            try (pool) {
                List<Future<String>> fs = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                    int n = i;
                    fs.add(pool.submit(() -> map(null, "{\"n\":" + n + "}", "function(doc){ emit(doc.n * 2); }").getFirst()));
                }
                for (int i = 0; i < 200; i++) assertEquals("[[" + (2 * i) + ",null]]", fs.get(i).get());
            }
        }
    }

    @Test
    void mapOutcomeTypes() throws Exception {
        try (MapProgram p = js.mapProgram(new JsEngine.MapSource("_design/t", List.of("function(d){ throw new TypeError('bad'); }"), null))) {
            MapOutcome.Failed f = assertInstanceOf(MapOutcome.Failed.class, p.map("{}").getFirst());
            assertEquals("TypeError: bad", f.reason());
        }
    }

    @Test
    void warmUpRunsTypicalFunctionsAndKeepsNothing() throws Exception {
        int before = js.pooledPrograms();
        assertEquals(1500, js.warmUp(1200), "whole batches of 500");
        assertEquals(before, js.pooledPrograms(), "the warm-up's contexts are closed, not pooled");
    }

    @Test
    void aListCannotOutliveItsHostByCatchingItsFailures() throws Exception {
        // The host fails every call once the response is abandoned; a function that swallows that
        // and calls again must still meet its time limit, not loop for ever on fresh allowances.
        JsonNode ddoc = j("{'_id':'_design/l','lists':{'spin':'function(head, req) { while (true) { try { getRow(); } catch (e) {} } }'}}");
        try (RenderProgram p = js.renderProgram(new JsEngine.DesignSource("_design/l", ddoc))) {
            JsFunctionException e = assertThrows(JsFunctionException.class, () -> p.list("spin", "{}", "{}", new RenderProgram.ListIO() {
                @Override
                public String nextRow() {
                    throw new IllegalStateException("abandoned");
                }

                @Override
                public void flush(List<String> chunks, JsonNode head) {
                    throw new IllegalStateException("abandoned");
                }
            }));
            assertEquals("timeout", e.error());
        }
    }

    @Test
    void aListTalksToItsHostOffTheClock() throws Exception {
        // Each row takes the host longer than the time limit: only the function's own time counts.
        JsonNode ddoc = j("{'_id':'_design/l','lists':{'count':'function(head, req) { var n = 0; while (getRow()) n++; return n; }'}}");
        List<String> out = new ArrayList<>();
        try (RenderProgram p = js.renderProgram(new JsEngine.DesignSource("_design/l", ddoc))) {
            int[] left = {3};
            p.list("count", "{}", "{}", new RenderProgram.ListIO() {
                @Override
                public String nextRow() {
                    try {
                        Thread.sleep(300);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    return left[0]-- > 0 ? "{}" : null;
                }

                @Override
                public void flush(List<String> chunks, JsonNode head) {
                    out.addAll(chunks);
                }
            });
        }
        assertEquals(List.of("3"), out);
    }
}
