package dev.chaise.views;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.js.FilterProgram;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.js.JsFunctionException;
import dev.chaise.views.js.MapOutcome;
import dev.chaise.views.js.MapProgram;
import dev.chaise.views.js.ReduceProgram;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * A {@link JsEngine} whose "sources" name Java functions: lets index tests exercise storage and
 * collation without a JavaScript engine in the loop. A function that throws fails that view for
 * that doc, as a throwing JS map does.
 */
public final class JavaMaps implements JsEngine {
    /** A map function: the parsed doc, and an emit callback. */
    public interface Fn extends BiConsumer<JsonNode, BiConsumer<JsonNode, JsonNode>> {}

    private final Map<String, Fn> functions = new ConcurrentHashMap<>();

    /** A reduce function: keys ([key, docid] pairs, null on rereduce), values, rereduce. */
    public interface ReduceFn {
        JsonNode apply(List<JsonNode> keys, List<JsonNode> values, boolean rereduce);
    }

    private final Map<String, ReduceFn> reduces = new ConcurrentHashMap<>();
    /** Calls of every reduce function so far, so tests can see what ran. */
    public final java.util.concurrent.atomic.AtomicLong reduceCalls = new java.util.concurrent.atomic.AtomicLong();

    public JavaMaps defineReduce(String name, ReduceFn fn) {
        reduces.put(name, fn);
        return this;
    }

    public JavaMaps define(String name, Fn fn) {
        functions.put(name, fn);
        return this;
    }

    /** Runs the named function the way a program would; for models that recompute views from scratch. */
    public MapOutcome run(String name, JsonNode doc) {
        List<MapOutcome.Emit> rows = new ArrayList<>();
        try {
            functions.get(name).accept(doc, (k, v) -> rows.add(new MapOutcome.Emit(k == null ? Json.NODES.nullNode() : k,
                    v == null ? Json.NODES.nullNode() : v)));
            return new MapOutcome.Rows(rows);
        } catch (RuntimeException e) {
            return new MapOutcome.Failed("runtime_error", String.valueOf(e.getMessage()));
        }
    }

    @Override
    public dev.chaise.views.js.RenderProgram renderProgram(DesignSource source) {
        throw new UnsupportedOperationException("no shows, lists or updates in Java");
    }

    @Override
    public void reduceLimit(boolean on) {}

    @Override
    public boolean speaks(String language) {
        return JAVASCRIPT.equals(language);
    }

    @Override
    public About about() {
        return new About("java-test-maps", null);
    }

    @Override
    public void checkCompiles(String source) throws JsFunctionException {
        if (!functions.containsKey(source)) throw new JsFunctionException("compilation_error", "no function " + source);
    }

    @Override
    public MapProgram mapProgram(MapSource source) throws JsFunctionException {
        for (String m : source.maps()) if (!functions.containsKey(m)) throw new JsFunctionException("compilation_error", "no function " + m);
        return new MapProgram() {
            @Override
            public List<MapOutcome> map(String docJson) {
                JsonNode doc;
                try {
                    doc = Json.MAPPER.readTree(docJson);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
                List<MapOutcome> out = new ArrayList<>();
                for (String m : source.maps()) out.add(run(m, doc));
                return out;
            }

            @Override
            public void close() {}
        };
    }

    @Override
    public ReduceProgram reduceProgram(ReduceSource source) throws JsFunctionException {
        List<ReduceFn> fns = new ArrayList<>();
        for (String r : source.reduces()) {
            ReduceFn fn = reduces.get(r);
            if (fn == null) throw new JsFunctionException("compilation_error", "no reduce function " + r);
            fns.add(fn);
        }
        return new ReduceProgram() {
            @Override
            public JsonNode reduce(int index, List<JsonNode> keys, List<JsonNode> values) {
                reduceCalls.incrementAndGet();
                return fns.get(index).apply(keys, values, false);
            }

            @Override
            public JsonNode rereduce(int index, List<JsonNode> values) {
                reduceCalls.incrementAndGet();
                return fns.get(index).apply(null, values, true);
            }

            @Override
            public void close() {}
        };
    }

    @Override
    public FilterProgram filterProgram(DesignSource source) throws JsFunctionException {
        throw new JsFunctionException("compilation_error", "JavaMaps has no filter functions");
    }

    @Override
    public dev.chaise.views.js.ValidateProgram validateProgram(DesignSource source) throws JsFunctionException {
        throw new JsFunctionException("compilation_error", "JavaMaps has no validate_doc_update functions");
    }

    @Override
    public void close() {}
}
